"""senpi's continuity decision recomputed: the pure decision (`decide`), the per-session replay that feeds it
(`replay`), the restart sidecar's verdict (`sidecar`) and the records from outside the transcript (`records`)."""
