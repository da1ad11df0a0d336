_cstream() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="cstream"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        cstream)
            opts="-t -f -q -e -o -j -c -h -V --to --from --no-dedupe --color --quiet --no-thinking --shell-lines --strict --exit-status --stats --output --otlp-endpoint --output-dir --summary --outputs --line-buffered --jobs --no-mmap --truncate-shell --keep-images --since --until --redact --no-redact --redact-pattern --coalesce --reasoning-field --tool-calls --include-usage --model --id --created --compact --thinking --group --prices --schema --generate --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --to)
                    COMPREPLY=($(compgen -W "text events openai-sse openai-json openai-responses openai-responses-json anthropic-sse anthropic-json documents documents-sse markdown html messages rows atif otlp-json usage" -- "${cur}"))
                    return 0
                    ;;
                -t)
                    COMPREPLY=($(compgen -W "text events openai-sse openai-json openai-responses openai-responses-json anthropic-sse anthropic-json documents documents-sse markdown html messages rows atif otlp-json usage" -- "${cur}"))
                    return 0
                    ;;
                --from)
                    COMPREPLY=($(compgen -W "auto cursor claude codex gemini acp cursor-sdk events claude-project codex-rollout gemini-chat cursor-transcript pi copilot opencode antigravity antigravity-transcript" -- "${cur}"))
                    return 0
                    ;;
                -f)
                    COMPREPLY=($(compgen -W "auto cursor claude codex gemini acp cursor-sdk events claude-project codex-rollout gemini-chat cursor-transcript pi copilot opencode antigravity antigravity-transcript" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --shell-lines)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --otlp-endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --summary)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --outputs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -j)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --truncate-shell)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --since)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --until)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --redact-pattern)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --coalesce)
                    COMPREPLY=($(compgen -W "whole burst" -- "${cur}"))
                    return 0
                    ;;
                --reasoning-field)
                    COMPREPLY=($(compgen -W "reasoning_content reasoning none" -- "${cur}"))
                    return 0
                    ;;
                --tool-calls)
                    COMPREPLY=($(compgen -W "reasoning content omit calls" -- "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --created)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --group)
                    COMPREPLY=($(compgen -W "day week month model agent project" -- "${cur}"))
                    return 0
                    ;;
                --prices)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schema)
                    COMPREPLY=($(compgen -W "events documents rows" -- "${cur}"))
                    return 0
                    ;;
                --generate)
                    COMPREPLY=($(compgen -W "man bash zsh fish powershell elvish" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _cstream -o nosort -o bashdefault -o default cstream
else
    complete -F _cstream -o bashdefault -o default cstream
fi
