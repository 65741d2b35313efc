"""mux / Xum's on-disk formats: `chat.jsonl` / `chat-archive.jsonl` rows (`chat`), the streaming `partial.json`
(`partial`) and the side files beside them (`side`)."""
