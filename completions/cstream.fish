complete -c cstream -s t -l to -d 'Output format' -r -f -a "text\t'A readable, coloured transcript'
events\t'Normalized events, one compact JSON object per line'
documents\t'One ChatResponse JSON per session, the answer split into typed documents'
documents-sse\t'The same documents as a live Server-Sent Events stream'"
complete -c cstream -s f -l from -d 'Input dialect (auto: detected from each input\'s first lines)' -r -f -a "auto\t'Detect from each input\'s first lines'
cursor\t'cursor-agent --output-format stream-json'
events\t'cstream\'s own --to events output'"
complete -c cstream -l model -d 'Override the model name the openai and documents formats report' -r
complete -c cstream -l id -d 'Override the response id the openai and documents formats derive' -r
complete -c cstream -l created -d 'Override the creation time (Unix seconds) the openai and documents formats derive' -r
complete -c cstream -l color -d 'When to colour the text format [NO_COLOR and CLICOLOR_FORCE are honoured with auto]' -r -f -a "auto\t'Colour when writing to a terminal (unless NO_COLOR is set, or CLICOLOR_FORCE asks for it)'
always\t'Always colour the text format'
never\t'Never colour'"
complete -c cstream -s o -l output -d 'Write to FILE instead of standard output' -r -F
complete -c cstream -l generate -d 'Generate the man page or a shell completion script' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''
powershell\t''
elvish\t''"
complete -c cstream -l no-dedupe -d 'Keep recap/replay text exactly as it came (default: emit only what a recap adds)'
complete -c cstream -s c -l compact -d 'One-line JSON for documents / openai-json (default: pretty, 2-space indent)'
complete -c cstream -l thinking -d 'documents: include thinking documents (off by default)'
complete -c cstream -l strict -d 'Stop at the first line that is not valid input (after writing its error event), exit 1'
complete -c cstream -s e -l exit-status -d 'Exit 3 when a session reported failure or ended without a result'
complete -c cstream -l line-buffered -d 'Flush after every input line, even when more input is waiting'
complete -c cstream -s h -l help -d 'Print help (see more with \'--help\')'
complete -c cstream -s V -l version -d 'Print version'
