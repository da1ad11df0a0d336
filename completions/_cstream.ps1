
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'cstream' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'cstream'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'cstream' {
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Input dialect (auto: detected from each input''s first lines)')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Input dialect (auto: detected from each input''s first lines)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the text format [NO_COLOR and CLICOLOR_FORCE are honoured with auto]')
            [CompletionResult]::new('--shell-lines', '--shell-lines', [CompletionResultType]::ParameterName, 'text: of the shell output that arrives with a call''s completion, show the last N lines, or all [default: 10 on a terminal, else all]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write to FILE instead of standard output')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write to FILE instead of standard output')
            [CompletionResult]::new('--otlp-endpoint', '--otlp-endpoint', [CompletionResultType]::ParameterName, 'With --to otlp-json: also POST each session''s request to this OTLP/HTTP receiver (http://HOST:PORT, to which /v1/traces is added, or the full traces URL), JSON encoded. The output is written first; a failed send is retried 5 times with backoff, and a session not accepted makes the exit status 4')
            [CompletionResult]::new('--output-dir', '--output-dir', [CompletionResultType]::ParameterName, 'One output file per input file under DIR, named after it (its path under the directory argument it was found in, or its file name) with the format''s extension (.txt, .ndjson, .md, .json, .sse); each written whole, then renamed into place')
            [CompletionResult]::new('--summary', '--summary', [CompletionResultType]::ParameterName, 'When the run ends, append a Markdown summary to FILE (for $GITHUB_STEP_SUMMARY; at most 1 MiB): outcome, errors, usage and cost, tool calls, failed commands, duration')
            [CompletionResult]::new('--outputs', '--outputs', [CompletionResultType]::ParameterName, 'When the run ends, append key=value lines to FILE (for $GITHUB_OUTPUT): outcome, tokens, cost, turns, duration, error')
            [CompletionResult]::new('-j', '-j', [CompletionResultType]::ParameterName, 'Read N files at once; the output is the same, in input order [default: the number of cores with several files, else 1]')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'Read N files at once; the output is the same, in input order [default: the number of cores with several files, else 1]')
            [CompletionResult]::new('--truncate-shell', '--truncate-shell', [CompletionResultType]::ParameterName, 'Cap each tool call''s shell output at SIZE bytes (64K, 1M, …): live output up to SIZE, then a marker; the completed output keeps its last SIZE bytes')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only sessions that started at or after TIME: an RFC 3339 time, a date (2026-03-02, UTC midnight) or an age (90m, 12h, 7d, 2w); a session that cannot be dated is kept')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'Only sessions that started before TIME (same forms as --since)')
            [CompletionResult]::new('--redact-pattern', '--redact-pattern', [CompletionResultType]::ParameterName, 'Also redact what REGEX matches (kind `custom`; repeatable; implies --redact)')
            [CompletionResult]::new('--coalesce', '--coalesce', [CompletionResultType]::ParameterName, 'With --to events: merge deltas into whole messages and tool calls (whole, the default), or merge adjacent deltas that arrived together (burst)')
            [CompletionResult]::new('--reasoning-field', '--reasoning-field', [CompletionResultType]::ParameterName, 'openai formats: the delta/message field thinking goes to (none: no thinking in any chat format)')
            [CompletionResult]::new('--tool-calls', '--tool-calls', [CompletionResultType]::ParameterName, 'openai and anthropic formats: how tool calls the agent already executed appear')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'openai, anthropic and documents formats: the model name to write (default: the one the agent reported, else "unknown")')
            [CompletionResult]::new('--id', '--id', [CompletionResultType]::ParameterName, 'openai, anthropic and documents formats: the response id to write (default: chatcmpl-<session id>, msg_<session id>, chat_<session id>)')
            [CompletionResult]::new('--created', '--created', [CompletionResultType]::ParameterName, 'openai and documents formats: the creation time to write, Unix seconds (default: the session''s first timestamp, else the time the run started)')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'usage: add sessions up by the day, week (from Monday) or month they started (UTC), their model, agent or project (working directory)')
            [CompletionResult]::new('--prices', '--prices', [CompletionResultType]::ParameterName, 'usage: estimate costs with the per-token prices in FILE (the format of the bundled table, docs/usage.md) instead of the bundled ones')
            [CompletionResult]::new('--schema', '--schema', [CompletionResultType]::ParameterName, 'Print the JSON Schema of the events lines, of a documents value or of the rows lines, and exit')
            [CompletionResult]::new('--generate', '--generate', [CompletionResultType]::ParameterName, 'Generate the man page or a shell completion script')
            [CompletionResult]::new('--no-dedupe', '--no-dedupe', [CompletionResultType]::ParameterName, 'Keep recap/replay text and cumulative tool-output snapshots exactly as they came (default: emit only what each adds)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'The conversation only: no session header or final line, no unknown events or invalid input lines in the text format; warnings on stderr only as one count per kind')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'The conversation only: no session header or final line, no unknown events or invalid input lines in the text format; warnings on stderr only as one count per kind')
            [CompletionResult]::new('--no-thinking', '--no-thinking', [CompletionResultType]::ParameterName, 'text: leave thinking out')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'Stop at the first line that is not valid input (after writing its error event), exit 1')
            [CompletionResult]::new('-e', '-e', [CompletionResultType]::ParameterName, 'Exit 3 when a session reported failure or ended without a result')
            [CompletionResult]::new('--exit-status', '--exit-status', [CompletionResultType]::ParameterName, 'Exit 3 when a session reported failure or ended without a result')
            [CompletionResult]::new('--stats', '--stats', [CompletionResultType]::ParameterName, 'After the run, print one summary line on stderr: lines and bytes read, bytes written, lines skipped, sessions (failed, incomplete), events by type, elapsed time')
            [CompletionResult]::new('--line-buffered', '--line-buffered', [CompletionResultType]::ParameterName, 'Flush after every input line, even when more input is waiting')
            [CompletionResult]::new('--no-mmap', '--no-mmap', [CompletionResultType]::ParameterName, 'Read named files instead of mapping them into memory: a file cut short (truncated) while it is read then cannot end the run (a mapped one ends it with SIGBUS)')
            [CompletionResult]::new('--keep-images', '--keep-images', [CompletionResultType]::ParameterName, 'Keep base64 images (Claude image blocks, Codex input_image, Gemini inlineData) in the payloads; by default each is replaced by `[image: TYPE, SIZE]`')
            [CompletionResult]::new('--redact', '--redact', [CompletionResultType]::ParameterName, 'Replace secrets (provider API keys, cloud keys, GitHub and Slack tokens, JWTs, PEM private keys) with `[REDACTED:<kind>]` in every field of every format, and in warnings that quote the input; counted by --stats. On by default for --to markdown, --to html, --to messages, --to atif, --to otlp-json and --summary')
            [CompletionResult]::new('--no-redact', '--no-redact', [CompletionResultType]::ParameterName, 'Turn off the redaction that --to markdown, --to html, --to messages, --to atif, --to otlp-json and --summary do by default')
            [CompletionResult]::new('--include-usage', '--include-usage', [CompletionResultType]::ParameterName, 'openai-sse: write the usage chunk after the finish chunk (when usage is known)')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'One-line JSON for the *-json formats and documents (default: pretty, 2-space indent; documents of several sessions are always one a line)')
            [CompletionResult]::new('--compact', '--compact', [CompletionResultType]::ParameterName, 'One-line JSON for the *-json formats and documents (default: pretty, 2-space indent; documents of several sessions are always one a line)')
            [CompletionResult]::new('--thinking', '--thinking', [CompletionResultType]::ParameterName, 'documents formats: include thinking documents (off by default: the documents[] spec has no such type)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
