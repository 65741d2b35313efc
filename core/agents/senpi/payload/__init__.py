"""What every senpi call sent on the resident lane: senpi's serializers byte for byte (`serialize`), the build
rules they follow (`rules`), the incremental measurement (`lane`, `context`, `analyzer`), senpi's ultrawork
dedupe (`dedupe`) and the exact blocks of one call rebuilt on demand (`rebuild`)."""
