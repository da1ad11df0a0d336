complete -c cstream -s t -l to -d 'Output format' -r -f -a "text\t'A readable, coloured transcript'
events\t'Normalized events, one compact JSON object per line'
openai-sse\t'OpenAI Chat Completions streaming (SSE), one stream per session'
openai-json\t'The OpenAI chat.completion object, one per session'
openai-responses\t'OpenAI Responses API streaming (SSE), one stream per session'
openai-responses-json\t'The OpenAI Responses response object, one per session'
anthropic-sse\t'Anthropic Messages streaming (SSE), one stream per session'
anthropic-json\t'The Anthropic Message object, one per session'
documents\t'One ChatResponse JSON per session, the answer split into typed documents'
documents-sse\t'The same documents as a live Server-Sent Events stream'
markdown\t'A transcript to read and share: one Markdown document per session, tools and thinking collapsible'
html\t'A transcript as one self-contained HTML page (no network): a section per session, contents by turn, tools and thinking collapsible'
messages\t'One chat-template row per session (messages with tool calls and results, tools), for datasets and trainers; redacted unless --no-redact'
rows\t'One flat JSON row per event with fixed columns (null when unknown), for DuckDB and other SQL engines'
atif\t'One ATIF trajectory per session (Harbor\'s format; sub-agents embedded, usage as step and final metrics), a JSON document a line; redacted unless --no-redact'
otlp-json\t'OpenTelemetry traces: one OTLP/JSON ExportTraceServiceRequest per session (GenAI agent spans); redacted unless --no-redact'
usage\t'Tokens, cost, turns and tool calls per session (or per day, model, … with --group): JSON rows, a table on a terminal'"
complete -c cstream -s f -l from -d 'Input dialect (auto: detected from each input\'s first lines)' -r -f -a "auto\t'Detect from each input\'s first lines'
cursor\t'cursor-agent --output-format stream-json'
claude\t'Claude Code -p --output-format stream-json --verbose'
codex\t'Codex exec --json'
gemini\t'Gemini CLI --output-format stream-json'
acp\t'Agent Client Protocol traffic (JSON-RPC session/update)'
cursor-sdk\t'Cursor SDK InteractionUpdate deltas or SDKMessage run stream'
events\t'cstream\'s own --to events output'
claude-project\t'Claude Code saved transcripts (~/.claude/projects/*/*.jsonl)'
codex-rollout\t'Codex saved rollouts (~/.codex/sessions/**/rollout-*.jsonl, .jsonl.zst)'
gemini-chat\t'Gemini CLI saved chats (~/.gemini/tmp/*/chats/session-*.json)'
cursor-transcript\t'cursor-agent saved transcripts (~/.cursor/projects/*/agent-transcripts/*/*.jsonl)'
pi\t'Pi saved sessions (~/.pi/agent/sessions/*/*.jsonl)'
copilot\t'GitHub Copilot CLI saved sessions (~/.copilot/session-state/*/events.jsonl) or -p --output-format json'
opencode\t'OpenCode run --format json, export JSON, or its opencode.db store'
antigravity\t'Antigravity CLI agy -p --output-format stream-json'
antigravity-transcript\t'Antigravity CLI saved transcripts (~/.gemini/antigravity-cli/brain/*/.system_generated/logs/transcript.jsonl)'"
complete -c cstream -l color -d 'When to colour the text format [NO_COLOR and CLICOLOR_FORCE are honoured with auto]' -r -f -a "auto\t'Colour when writing to a terminal (unless NO_COLOR is set, or CLICOLOR_FORCE asks for it)'
always\t'Always colour the text format'
never\t'Never colour'"
complete -c cstream -l shell-lines -d 'text: of the shell output that arrives with a call\'s completion, show the last N lines, or all [default: 10 on a terminal, else all]' -r
complete -c cstream -s o -l output -d 'Write to FILE instead of standard output' -r -F
complete -c cstream -l otlp-endpoint -d 'With --to otlp-json: also POST each session\'s request to this OTLP/HTTP receiver (http://HOST:PORT, to which /v1/traces is added, or the full traces URL), JSON encoded. The output is written first; a failed send is retried 5 times with backoff, and a session not accepted makes the exit status 4' -r
complete -c cstream -l output-dir -d 'One output file per input file under DIR, named after it (its path under the directory argument it was found in, or its file name) with the format\'s extension (.txt, .ndjson, .md, .json, .sse); each written whole, then renamed into place' -r -F
complete -c cstream -l summary -d 'When the run ends, append a Markdown summary to FILE (for $GITHUB_STEP_SUMMARY; at most 1 MiB): outcome, errors, usage and cost, tool calls, failed commands, duration' -r -F
complete -c cstream -l outputs -d 'When the run ends, append key=value lines to FILE (for $GITHUB_OUTPUT): outcome, tokens, cost, turns, duration, error' -r -F
complete -c cstream -s j -l jobs -d 'Read N files at once; the output is the same, in input order [default: the number of cores with several files, else 1]' -r
complete -c cstream -l truncate-shell -d 'Cap each tool call\'s shell output at SIZE bytes (64K, 1M, …): live output up to SIZE, then a marker; the completed output keeps its last SIZE bytes' -r
complete -c cstream -l since -d 'Only sessions that started at or after TIME: an RFC 3339 time, a date (2026-03-02, UTC midnight) or an age (90m, 12h, 7d, 2w); a session that cannot be dated is kept' -r
complete -c cstream -l until -d 'Only sessions that started before TIME (same forms as --since)' -r
complete -c cstream -l redact-pattern -d 'Also redact what REGEX matches (kind `custom`; repeatable; implies --redact)' -r
complete -c cstream -l coalesce -d 'With --to events: merge deltas into whole messages and tool calls (whole, the default), or merge adjacent deltas that arrived together (burst)' -r -f -a "whole\t'Whole messages, thinking phases and tool calls'
burst\t'Adjacent deltas of one kind that were read together'"
complete -c cstream -l reasoning-field -d 'openai formats: the delta/message field thinking goes to (none: no thinking in any chat format)' -r -f -a "reasoning_content\t'delta.reasoning_content (DeepSeek style; AI SDK, LiteLLM)'
reasoning\t'delta.reasoning (OpenRouter style)'
none\t'Drop thinking'"
complete -c cstream -l tool-calls -d 'openai and anthropic formats: how tool calls the agent already executed appear' -r -f -a "reasoning\t'One line per call in the reasoning channel (omitted with --reasoning-field none)'
content\t'One line per call in the content'
omit\t'Leave them out'
calls\t'Forward as tool_calls, for display only (a client that runs tools would run them again)'"
complete -c cstream -l model -d 'openai, anthropic and documents formats: the model name to write (default: the one the agent reported, else "unknown")' -r
complete -c cstream -l id -d 'openai, anthropic and documents formats: the response id to write (default: chatcmpl-<session id>, msg_<session id>, chat_<session id>)' -r
complete -c cstream -l created -d 'openai and documents formats: the creation time to write, Unix seconds (default: the session\'s first timestamp, else the time the run started)' -r
complete -c cstream -l group -d 'usage: add sessions up by the day, week (from Monday) or month they started (UTC), their model, agent or project (working directory)' -r -f -a "day\t'The UTC day the session started'
week\t'The week (Monday to Sunday, UTC) the session started'
month\t'The UTC month the session started'
model\t'The model the session named'
agent\t'The agent that wrote it'
project\t'The working directory the session named'"
complete -c cstream -l prices -d 'usage: estimate costs with the per-token prices in FILE (the format of the bundled table, docs/usage.md) instead of the bundled ones' -r
complete -c cstream -l schema -d 'Print the JSON Schema of the events lines, of a documents value or of the rows lines, and exit' -r -f -a "events\t'One line of `--to events`'
documents\t'One value of `--to documents`'
rows\t'One line of `--to rows`'"
complete -c cstream -l generate -d 'Generate the man page or a shell completion script' -r -f -a "man\t'The man page'
bash\t'bash completions'
zsh\t'zsh completions'
fish\t'fish completions'
powershell\t'PowerShell completions'
elvish\t'elvish completions'"
complete -c cstream -l no-dedupe -d 'Keep recap/replay text and cumulative tool-output snapshots exactly as they came (default: emit only what each adds)'
complete -c cstream -s q -l quiet -d 'The conversation only: no session header or final line, no unknown events or invalid input lines in the text format; warnings on stderr only as one count per kind'
complete -c cstream -l no-thinking -d 'text: leave thinking out'
complete -c cstream -l strict -d 'Stop at the first line that is not valid input (after writing its error event), exit 1'
complete -c cstream -s e -l exit-status -d 'Exit 3 when a session reported failure or ended without a result'
complete -c cstream -l stats -d 'After the run, print one summary line on stderr: lines and bytes read, bytes written, lines skipped, sessions (failed, incomplete), events by type, elapsed time'
complete -c cstream -l line-buffered -d 'Flush after every input line, even when more input is waiting'
complete -c cstream -l no-mmap -d 'Read named files instead of mapping them into memory: a file cut short (truncated) while it is read then cannot end the run (a mapped one ends it with SIGBUS)'
complete -c cstream -l keep-images -d 'Keep base64 images (Claude image blocks, Codex input_image, Gemini inlineData) in the payloads; by default each is replaced by `[image: TYPE, SIZE]`'
complete -c cstream -l redact -d 'Replace secrets (provider API keys, cloud keys, GitHub and Slack tokens, JWTs, PEM private keys) with `[REDACTED:<kind>]` in every field of every format, and in warnings that quote the input; counted by --stats. On by default for --to markdown, --to html, --to messages, --to atif, --to otlp-json and --summary'
complete -c cstream -l no-redact -d 'Turn off the redaction that --to markdown, --to html, --to messages, --to atif, --to otlp-json and --summary do by default'
complete -c cstream -l include-usage -d 'openai-sse: write the usage chunk after the finish chunk (when usage is known)'
complete -c cstream -s c -l compact -d 'One-line JSON for the *-json formats and documents (default: pretty, 2-space indent; documents of several sessions are always one a line)'
complete -c cstream -l thinking -d 'documents formats: include thinking documents (off by default: the documents[] spec has no such type)'
complete -c cstream -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cstream -s V -l version -d 'Print version'
