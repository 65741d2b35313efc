"""Claude Code sessions as the persistent index groups them (`core.kernel.assembly`, `core.index.assembled`).

What one session's files give depends on another's through four things only, all kept by `ClaudeCalls`: a
message id two sessions hold (a resumed or forked copy: `shared`; a sub-agent replaying a parent message under
another request: `links`), a sidechain line routed to the session that claimed its `sessionId` first
(`by_session_id`), and a file whose records reach another file's session (a `subagents/` file: `touched`). A
group's ids are its message ids (`m:`) and claimed session ids (`s:`): a file a later run reads that would have
met a stored group in a cold read holds one of them, or reaches one of its sessions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.kernel.assembly import Assembly

if TYPE_CHECKING:
    from core.agents.claude_code.calls import ClaudeCalls
    from core.kernel.pipeline import Store

__all__ = ["assembly"]


def assembly(calls: ClaudeCalls, store: Store) -> Assembly:
    ids: dict[str, set[str]] = {}
    for msg_id, call in calls.calls.items():
        ids.setdefault(call.session_key, set()).add("m:" + msg_id)
    for key, msg_id in calls.copies:
        ids.setdefault(key, set()).add("m:" + msg_id)
    for session_id, key in calls.by_session_id.items():
        ids.setdefault(key, set()).add("s:" + session_id)
    links = set(calls.links) | {shared.keys for shared in calls.shared.values()}
    return Assembly({key: set(files) for key, files in calls.touched.items()}, links, ids)
