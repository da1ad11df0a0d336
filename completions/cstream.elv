
use builtin;
use str;

set edit:completion:arg-completer[cstream] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'cstream'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'cstream'= {
            cand -t 'Output format'
            cand --to 'Output format'
            cand -f 'Input dialect (auto: detected from each input''s first lines)'
            cand --from 'Input dialect (auto: detected from each input''s first lines)'
            cand --color 'When to colour the text format [NO_COLOR and CLICOLOR_FORCE are honoured with auto]'
            cand --shell-lines 'text: of the shell output that arrives with a call''s completion, show the last N lines, or all [default: 10 on a terminal, else all]'
            cand -o 'Write to FILE instead of standard output'
            cand --output 'Write to FILE instead of standard output'
            cand --otlp-endpoint 'With --to otlp-json: also POST each session''s request to this OTLP/HTTP receiver (http://HOST:PORT, to which /v1/traces is added, or the full traces URL), JSON encoded. The output is written first; a failed send is retried 5 times with backoff, and a session not accepted makes the exit status 4'
            cand --output-dir 'One output file per input file under DIR, named after it (its path under the directory argument it was found in, or its file name) with the format''s extension (.txt, .ndjson, .md, .json, .sse); each written whole, then renamed into place'
            cand --summary 'When the run ends, append a Markdown summary to FILE (for $GITHUB_STEP_SUMMARY; at most 1 MiB): outcome, errors, usage and cost, tool calls, failed commands, duration'
            cand --outputs 'When the run ends, append key=value lines to FILE (for $GITHUB_OUTPUT): outcome, tokens, cost, turns, duration, error'
            cand -j 'Read N files at once; the output is the same, in input order [default: the number of cores with several files, else 1]'
            cand --jobs 'Read N files at once; the output is the same, in input order [default: the number of cores with several files, else 1]'
            cand --truncate-shell 'Cap each tool call''s shell output at SIZE bytes (64K, 1M, …): live output up to SIZE, then a marker; the completed output keeps its last SIZE bytes'
            cand --since 'Only sessions that started at or after TIME: an RFC 3339 time, a date (2026-03-02, UTC midnight) or an age (90m, 12h, 7d, 2w); a session that cannot be dated is kept'
            cand --until 'Only sessions that started before TIME (same forms as --since)'
            cand --redact-pattern 'Also redact what REGEX matches (kind `custom`; repeatable; implies --redact)'
            cand --coalesce 'With --to events: merge deltas into whole messages and tool calls (whole, the default), or merge adjacent deltas that arrived together (burst)'
            cand --reasoning-field 'openai formats: the delta/message field thinking goes to (none: no thinking in any chat format)'
            cand --tool-calls 'openai and anthropic formats: how tool calls the agent already executed appear'
            cand --model 'openai, anthropic and documents formats: the model name to write (default: the one the agent reported, else "unknown")'
            cand --id 'openai, anthropic and documents formats: the response id to write (default: chatcmpl-<session id>, msg_<session id>, chat_<session id>)'
            cand --created 'openai and documents formats: the creation time to write, Unix seconds (default: the session''s first timestamp, else the time the run started)'
            cand --group 'usage: add sessions up by the day, week (from Monday) or month they started (UTC), their model, agent or project (working directory)'
            cand --prices 'usage: estimate costs with the per-token prices in FILE (the format of the bundled table, docs/usage.md) instead of the bundled ones'
            cand --schema 'Print the JSON Schema of the events lines, of a documents value or of the rows lines, and exit'
            cand --generate 'Generate the man page or a shell completion script'
            cand --no-dedupe 'Keep recap/replay text and cumulative tool-output snapshots exactly as they came (default: emit only what each adds)'
            cand -q 'The conversation only: no session header or final line, no unknown events or invalid input lines in the text format; warnings on stderr only as one count per kind'
            cand --quiet 'The conversation only: no session header or final line, no unknown events or invalid input lines in the text format; warnings on stderr only as one count per kind'
            cand --no-thinking 'text: leave thinking out'
            cand --strict 'Stop at the first line that is not valid input (after writing its error event), exit 1'
            cand -e 'Exit 3 when a session reported failure or ended without a result'
            cand --exit-status 'Exit 3 when a session reported failure or ended without a result'
            cand --stats 'After the run, print one summary line on stderr: lines and bytes read, bytes written, lines skipped, sessions (failed, incomplete), events by type, elapsed time'
            cand --line-buffered 'Flush after every input line, even when more input is waiting'
            cand --no-mmap 'Read named files instead of mapping them into memory: a file cut short (truncated) while it is read then cannot end the run (a mapped one ends it with SIGBUS)'
            cand --keep-images 'Keep base64 images (Claude image blocks, Codex input_image, Gemini inlineData) in the payloads; by default each is replaced by `[image: TYPE, SIZE]`'
            cand --redact 'Replace secrets (provider API keys, cloud keys, GitHub and Slack tokens, JWTs, PEM private keys) with `[REDACTED:<kind>]` in every field of every format, and in warnings that quote the input; counted by --stats. On by default for --to markdown, --to html, --to messages, --to atif, --to otlp-json and --summary'
            cand --no-redact 'Turn off the redaction that --to markdown, --to html, --to messages, --to atif, --to otlp-json and --summary do by default'
            cand --include-usage 'openai-sse: write the usage chunk after the finish chunk (when usage is known)'
            cand -c 'One-line JSON for the *-json formats and documents (default: pretty, 2-space indent; documents of several sessions are always one a line)'
            cand --compact 'One-line JSON for the *-json formats and documents (default: pretty, 2-space indent; documents of several sessions are always one a line)'
            cand --thinking 'documents formats: include thinking documents (off by default: the documents[] spec has no such type)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
    ]
    $completions[$command]
}
