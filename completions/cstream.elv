
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
            cand --model 'Override the model name the openai and documents formats report'
            cand --id 'Override the response id the openai and documents formats derive'
            cand --created 'Override the creation time (Unix seconds) the openai and documents formats derive'
            cand --color 'When to colour the text format [NO_COLOR and CLICOLOR_FORCE are honoured with auto]'
            cand -o 'Write to FILE instead of standard output'
            cand --output 'Write to FILE instead of standard output'
            cand --generate 'Generate the man page or a shell completion script'
            cand --no-dedupe 'Keep recap/replay text exactly as it came (default: emit only what a recap adds)'
            cand -c 'One-line JSON for documents / openai-json (default: pretty, 2-space indent)'
            cand --compact 'One-line JSON for documents / openai-json (default: pretty, 2-space indent)'
            cand --thinking 'documents: include thinking documents (off by default)'
            cand --strict 'Stop at the first line that is not valid input (after writing its error event), exit 1'
            cand -e 'Exit 3 when a session reported failure or ended without a result'
            cand --exit-status 'Exit 3 when a session reported failure or ended without a result'
            cand --line-buffered 'Flush after every input line, even when more input is waiting'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
    ]
    $completions[$command]
}
