# cursor-agent stream-json -> OpenAI chat.completion.chunk SSE, statelessly, the way
# a shell pipeline would do it. The jq baseline of bench/run.sh:
#
#     jq -c -r -f bench/to_openai_sse.jq < stream.jsonl
#
# Per line: system/init -> the role chunk; thinking/delta -> delta.reasoning_content;
# assistant token deltas (timestamp_ms and no model_call_id) -> delta.content (recaps
# are dropped); result -> a finish chunk, then `data: [DONE]`. Everything else is
# skipped. Being stateless it cannot know the model or the first timestamp, so `model`
# is "cursor" and `created` is the line's own timestamp in seconds (0 without one).
# jq -r prints each string with a newline, so "data: …\n" ends each record with the
# blank line SSE needs.

def chunk($delta; $finish):
  "data: " + ({
    id: ("chatcmpl-" + (.session_id // "unknown")),
    object: "chat.completion.chunk",
    created: ((.timestamp_ms // 0) / 1000 | floor),
    model: "cursor",
    choices: [{index: 0, delta: $delta, finish_reason: $finish}]
  } | tojson) + "\n";

if .type == "system" and .subtype == "init" then
  chunk({role: "assistant", content: ""}; null)
elif .type == "thinking" and .subtype == "delta" then
  chunk({reasoning_content: (.text // "")}; null)
elif .type == "assistant" and (.timestamp_ms | type) == "number" and (has("model_call_id") | not) then
  . as $line | .message.content[]? | select(.type == "text") | .text as $t
  | $line | chunk({content: $t}; null)
elif .type == "result" then
  chunk({}; (if .is_error then "error" else "stop" end)), "data: [DONE]\n"
else
  empty
end
