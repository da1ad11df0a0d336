// Opens cstream's `--to html` page of every fixture in a real browser
// (Debian's Chromium, headless, driven by playwright-core) and checks what a
// reader would meet:
//
// - no console error, no uncaught exception, no dialog (alert/confirm);
// - no request but the page itself (every other one is aborted and fails);
// - no element cstream never writes (script, img, iframe, link, base,
//   object, embed, svg, form, input): hostile text stayed text;
// - the text the stream gave is on the page (each turn heading, each
//   session heading; for the hostile fixture, its markup shown literally);
// - thinking and tool calls collapsed: every <details> closed and its
//   content not rendered, then open in print;
// - on a phone-sized viewport nothing is wider than the screen; light and
//   dark differ;
// - the agent's Markdown is rendered (a page made from events written
//   here): its headings below the turn's, a table, a safe link with
//   rel=noopener, a javascript: link and raw HTML left as text, a coloured
//   code block tagged with its language.
//
// Before the fixtures, a self-test: a page with one hostile string left
// unescaped must fail these checks, so the check cannot pass vacuously.
//
// Usage (from the repository root):
//   npm ci --prefix target/browser  (after copying scripts/browser/package*.json there;
//                                     .ci/run does this)
//   node scripts/check-html.mjs [--cstream target/debug/cstream] [--describe FIXTURE] [--index-only]
// `--describe FIXTURE` prints the page's accessibility tree (what a screen
// reader and the browser show) and its visible text, and checks nothing.

import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const args = process.argv.slice(2);
const opt = name => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const cstream = path.resolve(opt('--cstream') ?? path.join(root, 'target/debug/cstream'));
const modules = process.env.CSTREAM_BROWSER_MODULES ?? path.join(root, 'target/browser');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const out = path.join(root, 'target/html-check');
fs.mkdirSync(out, { recursive: true });

const req = createRequire(path.join(modules, 'package.json'));
const { chromium } = req('playwright-core');

// This machine's network is closed: without the background-networking
// flags Chromium keeps trying Google's hosts at every start.
const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});

function fixtures(dir) {
  const found = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) found.push(...fixtures(p));
    else if (/\.(jsonl|json)$/.test(e.name)) found.push(p);
  }
  return found.sort();
}

/** The page for `fixture`, written under target/html-check/. */
function render(fixture) {
  const argsFile = fixture.replace(/\.(jsonl|json)$/, '.args');
  const extra = fs.existsSync(argsFile)
    ? fs.readFileSync(argsFile, 'utf8').split(/\s+/).filter(Boolean)
    : [];
  let html;
  try {
    html = execFileSync(cstream, ['--to', 'html', ...extra, fixture], {
      maxBuffer: 1 << 28,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch (e) {
    // A fixture of bad input exits non-zero; its page is still written.
    html = e.stdout;
  }
  const name = path.relative(path.join(root, 'fixtures'), fixture).replaceAll('/', '__');
  const file = path.join(out, `${name}.html`);
  fs.writeFileSync(file, html);
  return { file, html: html.toString('utf8') };
}

/** The text a browser shows for an escaped stretch of cstream's HTML. */
const unescape = s =>
  s
    .replace(/<[^>]*>/g, '')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&');

/** What the page must show: every h1 and h2 as written, and `extra`. */
function expected(html, extra = []) {
  const want = [];
  for (const m of html.matchAll(/<h[12][^>]*>(.*?)<\/h[12]>/g)) want.push(unescape(m[1]));
  return [...want, ...extra];
}

/** Open `file` and return the problems found (empty: it passed). */
async function check(file, want) {
  const problems = [];
  const context = await browser.newContext({ viewport: { width: 375, height: 740 }, javaScriptEnabled: true });
  const page = await context.newPage();
  const url = pathToFileURL(file).href;
  await context.route('**/*', route =>
    route.request().url() === url ? route.continue() : route.abort(),
  );
  page.on('request', r => {
    if (r.url() !== url) problems.push(`request: ${r.url()}`);
  });
  page.on('console', m => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', e => problems.push(`exception: ${e.message}`));
  page.on('dialog', d => {
    problems.push(`dialog ${d.type()}: ${d.message()}`);
    d.dismiss().catch(() => {});
  });
  await page.goto(url, { waitUntil: 'load' });
  // Handlers such as onerror fire after load; give them a moment.
  await page.waitForTimeout(100);

  const facts = await page.evaluate(() => {
    const details = [...document.querySelectorAll('details')];
    const hidden = el => !el.checkVisibility();
    return {
      foreign: [
        ...document.querySelectorAll(
          'script,img,iframe,frame,link,base,object,embed,svg,form,input,button,video,audio,meta[http-equiv=refresh]',
        ),
      ].map(e => e.outerHTML.slice(0, 120)),
      text: document.body.innerText,
      details: details.length,
      open: details.filter(d => d.open).length,
      shownInside: details.filter(d => [...d.children].some(c => c.tagName !== 'SUMMARY' && !hidden(c))).length,
      overflow: document.documentElement.scrollWidth - window.innerWidth,
      bg: getComputedStyle(document.body).backgroundColor,
    };
  });
  for (const f of facts.foreign) problems.push(`an element cstream never writes: ${f}`);
  // innerText shows collapsed blocks' summaries only; the page's own text
  // is compared with newlines and runs of spaces folded.
  const fold = s => s.replace(/\s+/g, ' ');
  const shown = fold(facts.text);
  for (const w of want) if (!shown.includes(fold(w))) problems.push(`text not shown: ${JSON.stringify(w)}`);
  if (facts.open) problems.push(`${facts.open} <details> open on load`);
  if (facts.shownInside) problems.push(`${facts.shownInside} collapsed blocks show their content`);
  if (facts.overflow > 0) problems.push(`${facts.overflow}px wider than a phone screen`);

  await page.emulateMedia({ colorScheme: 'dark' });
  const dark = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  if (dark === facts.bg) problems.push(`the same background in light and dark: ${dark}`);

  await page.emulateMedia({ media: 'print', colorScheme: 'light' });
  const printed = await page.evaluate(
    () =>
      [...document.querySelectorAll('details')].filter(d =>
        [...d.children].some(c => c.tagName !== 'SUMMARY' && !c.checkVisibility()),
      ).length,
  );
  if (printed) problems.push(`${printed} collapsed blocks stay closed in print`);
  await context.close();
  return { problems, details: facts.details };
}

if (opt('--describe')) {
  const { file } = render(path.resolve(opt('--describe')));
  const page = await browser.newPage({ viewport: { width: 375, height: 740 } });
  await page.goto(pathToFileURL(file).href);
  console.log('--- accessibility tree (body) ---');
  console.log(await page.locator('body').ariaSnapshot());
  console.log('--- visible text ---');
  console.log(await page.evaluate(() => document.body.innerText));
  await browser.close();
  process.exit(0);
}

const hostile = path.join(root, 'fixtures/events/html_hostile-markup-controls-two-sessions.jsonl');
// Shown literally on the hostile fixture's page (what its tests also read back).
const hostileText = [
  '</title><script>alert(1)</script>',
  '<script>alert(3)</script> &amp; &lt;b&gt; <!-- comment -->',
  'Text <img src=x onerror=alert(4)> and \\u{1b}[31mred\\u{1b}[0m and \\u{2066}isolate\\u{2069}',
  '<svg onload=alert(6)> failed (exit 1)',
  '</table><script>alert(11)</script>',
  '</nav></section></main><script>alert(12)</script>',
];

// `--index-only`: the index checks alone (quicker, while working on it).
const indexOnly = args.includes('--index-only');
let failed = 0;
let passed = 0;
const pass = m => {
  passed++;
  console.log(m);
};

// Self-test: the hostile page with one string left unescaped must fail.
if (!indexOnly) {
  const { html } = render(hostile);
  const bad = html.replace(
    '&lt;img src=x onerror=alert(4)&gt;',
    '<img src=x onerror=alert(4)>',
  );
  if (bad === html) {
    console.error('self-test: the hostile page no longer has the string it breaks');
    failed++;
  } else {
    const file = path.join(out, 'self-test_unescaped.html');
    fs.writeFileSync(file, bad);
    const { problems } = await check(file, expected(html, hostileText));
    if (problems.length === 0) {
      console.error('self-test: a page with unescaped markup passed the checks');
      failed++;
    } else {
      pass(`ok   self-test: unescaped markup caught (${problems.length} problems, first: ${problems[0]})`);
    }
  }
}

// The agent's Markdown, rendered: read from the real DOM.
if (!indexOnly) {
  const answer = [
    '# Available Tools', '', '**Read** reads `a file`.', '',
    '| Tool | Calls |', '|---|--:|', '| Read | 2 |', '',
    '[docs](https://example.com/) and [bad](javascript:alert(1))', '',
    '<script>alert(2)</script>', '', 'inline <img src=x onerror=alert(3)> tag', '',
    '```rust', 'fn main() {}', '```', '',
  ].join('\n');
  const events = [
    { type: 'session_started', sessionId: 's', dialect: 'claude' },
    { type: 'user_message', sessionId: 's', text: 'list the tools' },
    { type: 'assistant_message', sessionId: 's', text: answer },
  ];
  const html = execFileSync(cstream, ['--to', 'html'], {
    input: events.map(e => JSON.stringify(e)).join('\n') + '\n',
  });
  const file = path.join(out, 'markdown-rendered.html');
  fs.writeFileSync(file, html);
  const { problems } = await check(file, expected(html.toString('utf8'), [
    '<script>alert(2)</script>',
    'inline <img src=x onerror=alert(3)> tag',
    'bad (javascript:alert(1))',
  ]));
  const page = await browser.newPage();
  await page.goto(pathToFileURL(file).href);
  const dom = await page.evaluate(() => {
    const md = [...document.querySelectorAll('section .md')];
    const q = sel => md.flatMap(m => [...m.querySelectorAll(sel)]);
    return {
      h3: q('h3').map(h => h.textContent),
      h1h2: q('h1,h2').length,
      tables: q('table').map(t => [...t.querySelectorAll('th,td')].map(c => c.textContent)),
      right: q('th.ar,td.ar').map(c => getComputedStyle(c).textAlign),
      links: q('a').map(a => [a.getAttribute('href'), a.rel]),
      strong: q('strong').map(s => s.textContent),
      code: q('pre code.language-rust').map(c => c.querySelectorAll('span[class^=hl-]').length),
      keyword: q('pre code .hl-k').map(k => getComputedStyle(k).color),
      plain: getComputedStyle(document.body).color,
    };
  });
  await page.close();
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  if (!same(dom.h3, ['Available Tools'])) problems.push(`h3: ${JSON.stringify(dom.h3)}`);
  if (dom.h1h2) problems.push(`${dom.h1h2} h1/h2 inside the agent's text`);
  if (!same(dom.tables, [['Tool', 'Calls', 'Read', '2']])) problems.push(`tables: ${JSON.stringify(dom.tables)}`);
  if (!same(dom.right, ['right', 'right'])) problems.push(`alignment: ${JSON.stringify(dom.right)}`);
  if (!same(dom.links, [['https://example.com/', 'noopener noreferrer']])) problems.push(`links: ${JSON.stringify(dom.links)}`);
  if (!same(dom.strong, ['Read'])) problems.push(`strong: ${JSON.stringify(dom.strong)}`);
  if (dom.code.length !== 1 || dom.code[0] === 0) problems.push(`rust code block: ${JSON.stringify(dom.code)}`);
  if (dom.keyword.length === 0 || dom.keyword[0] === dom.plain) problems.push(`keyword not coloured: ${JSON.stringify(dom.keyword)}`);
  if (problems.length) {
    failed++;
    console.error('FAIL the agent\'s Markdown');
    for (const p of problems) console.error(`     ${p}`);
  } else {
    pass('ok   the agent\'s Markdown (headings, table, links, raw HTML inert, coloured code)');
  }
}

const all = indexOnly ? [] : fixtures(path.join(root, 'fixtures'));
for (const fixture of all) {
  const { file, html } = render(fixture);
  const want = expected(html, fixture === hostile ? hostileText : []);
  const { problems, details } = await check(file, want);
  const name = path.relative(root, fixture);
  if (problems.length) {
    failed++;
    console.error(`FAIL ${name}`);
    for (const p of problems) console.error(`     ${p}`);
  } else {
    pass(`ok   ${name} (${want.length} texts, ${details} collapsed blocks)`);
  }
}
// The index of a directory of pages (--output-dir): the same checks, and
// every link leads to a page that was written. Made twice: of
// fixtures/claude-project, and of a tree of long names (deep directories,
// names without a break, a failed session) named by its absolute path, as
// a CI job names its checkout. At a laptop's 1200 px and a phone's 390 px,
// every row's outcome is inside the window and the page does not scroll
// sideways; the page names each input under the directory argument, never
// by the path it was read from.
function longTree() {
  const tree = path.join(out, 'index-long-tree');
  fs.rmSync(tree, { recursive: true, force: true });
  const deep = path.join(
    tree,
    'projects',
    '-home-runner-work-some-organisation-some-rather-long-repository-name-checkout',
    'nested-directory-for-the-sessions-of-one-agent',
  );
  fs.mkdirSync(deep, { recursive: true });
  const from = path.join(root, 'fixtures');
  const copies = [
    ['claude-project/rewind_parallel-results_placeholder-usage.jsonl',
      'a-session-file-whose-name-goes-on-without-any-break-at-all-0123456789abcdef0123456789abcdef.jsonl'],
    ['claude-project/two-messages-one-turn_2.1.214.jsonl', 'short.jsonl'],
    ['cursor/error-result.jsonl', 'failed-run_with-a-long-descriptive-name_and-more-words.jsonl'],
  ];
  for (const [src, name] of copies) fs.copyFileSync(path.join(from, src), path.join(deep, name));
  return { tree, pages: copies.length };
}

async function checkIndex(label, input, pages) {
  const dir = path.join(out, `index-check-${label}`);
  fs.rmSync(dir, { recursive: true, force: true });
  try {
    execFileSync(cstream, ['--to', 'html', '--output-dir', dir, input], {
      stdio: ['ignore', 'ignore', 'ignore'],
    });
  } catch {
    // A failed session does not stop the pages being written.
  }
  const file = path.join(dir, 'index.html');
  if (!fs.existsSync(file)) return [`no ${file}`];
  const html = fs.readFileSync(file, 'utf8');
  const { problems } = await check(file, expected(html));
  for (const width of [1200, 390]) {
    const page = await browser.newPage({ viewport: { width, height: 800 } });
    await page.goto(pathToFileURL(file).href);
    const facts = await page.evaluate(() => ({
      inner: window.innerWidth,
      scroll: document.documentElement.scrollWidth,
      rows: [...document.querySelectorAll('tbody tr')].map(tr => ({
        name: tr.cells[0].innerText,
        right: tr.cells[tr.cells.length - 1].getBoundingClientRect().right,
      })),
      hrefs: [...document.querySelectorAll('a')].map(a => [a.getAttribute('href'), a.href]),
    }));
    await page.close();
    if (facts.rows.length < 2 || (pages !== null && facts.rows.length !== pages)) problems.push(`${width}px: ${facts.rows.length} rows, not ${pages}`);
    if (facts.scroll > facts.inner) problems.push(`${width}px: the page scrolls sideways (${facts.scroll}px wide)`);
    for (const r of facts.rows) {
      if (r.name.includes(input)) problems.push(`${r.name}: named by its path on this machine, not under ${input}`);
      if (r.right > facts.inner) problems.push(`${width}px: the outcome of ${r.name} ends at ${Math.round(r.right)}px, off-screen`);
    }
    for (const [raw, h] of facts.hrefs) {
      if (raw.startsWith('/') || /^[a-z]+:/i.test(raw)) problems.push(`a link not relative to the index: ${raw}`);
      if (!fs.existsSync(fileURLToPath(h))) problems.push(`a link to nowhere: ${h}`);
    }
  }
  return problems;
}

{
  const long = longTree();
  // The fixture directory's page count is what its walk finds; the long
  // tree's is known.
  for (const [label, input, pages] of [
    ['claude-project', path.join(root, 'fixtures/claude-project'), null],
    ['long-names', long.tree, long.pages],
  ]) {
    const problems = await checkIndex(label, input, pages);
    if (problems.length) {
      failed++;
      console.error(`FAIL index.html of ${label}`);
      for (const p of problems) console.error(`     ${p}`);
    } else {
      pass(`ok   index.html of ${label} (outcomes on screen at 1200px and 390px, links relative)`);
    }
  }
}
await browser.close();
console.log(`${passed} passed, ${failed} failed (${all.length} fixtures, two indexes, the Markdown page and the self-test)`);
process.exit(failed ? 1 : 0);
