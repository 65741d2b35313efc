"""senpi's on-disk formats: `session.log` and `compaction.log` (`logs`), transcripts (`transcript`), the restart
sidecar (`sidecar`) and saved `--mode json` event recordings (`events`)."""
