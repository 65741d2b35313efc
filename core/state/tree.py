"""A pi-family transcript's entry tree in state: ids, parents and pointers, never bodies.

Entries are kept as `EntryNode`s (id, parent, type, where). The active branch is the path from the root to
the newest entry; a new entry whose parent is not the current leaf (the user navigated the tree, pi's `/tree`)
cuts the branch back to the common ancestor, tells every analyzer (`on_branch`), and re-delivers the path down
to the new parent, each entry re-read through the port by its pointer. Which entry is a call, and the `Turn`
it starts, is the session's agent's (`Analysis.calls`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.formats.base import interned
from core.model import EntryNode, SessionHeader, TranscriptEntry, Turn, entry_key

if TYPE_CHECKING:
    from core.agents.base import Agent
    from core.kernel.ports import Reread
    from core.state.session import SessionState


class Tree:
    """The transcript-tree part of `State`."""

    reread: Reread
    if TYPE_CHECKING:  # provided by `State`

        def session_for(self, key: str, session_id: str | None, agent: Agent) -> SessionState: ...

        def _attribute_turn(self, session: SessionState, turn: Turn) -> None: ...

    def _add_header(self, header: SessionHeader, agent: Agent) -> None:
        session = self.session_for(header.where.path, header.session_id, agent)
        session.session_id = header.session_id
        session.header = header
        session.cwd = header.cwd

    def _add_entry(self, entry: TranscriptEntry, agent: Agent) -> None:
        session = self.session_for(entry.where.path, None, agent)
        session.entries += 1
        # entries without ids (pi v1 files) form a simple chain keyed by line number
        entry_id = entry_key(entry.id, entry.where.line)
        parent = entry.parent_id
        if parent is None and entry.id is None and session.branch:
            parent = session.branch[-1]
        elif parent is not None:
            known = session.nodes.get(parent)
            if known is not None:
                parent = known.id  # the parent's own id object: one string per entry, not two
        node = EntryNode(entry_id, parent, interned(entry.type) or entry.type, entry.where)
        session.nodes[entry_id] = node
        if session.branch and parent != session.branch[-1]:
            self._switch_branch(session, parent)
        session.branch.append(entry_id)
        self._deliver(session, entry, node, replay=False)

    def _deliver(self, session: SessionState, entry: TranscriptEntry, node: EntryNode, *, replay: bool) -> None:
        turn: Turn | None = None
        calls = session.agent.load().calls
        if calls is not None and calls.is_call(entry):
            if replay and node.turn_index is not None:
                turn = session.turns[node.turn_index]
            else:
                turn = calls.new_turn(session.session_id, len(session.turns), entry)
                session.turns.append(turn)
                if turn.logged is not None:
                    self._attribute_turn(session, turn)
                node.turn_index = turn.index
        for analyzer in session.analyzers.values():
            analyzer.on_entry(session, entry, turn)

    def _switch_branch(self, session: SessionState, parent: str | None) -> None:
        """Cut the active branch back to the common ancestor, then replay the path down to `parent`."""
        path: list[str] = []
        cursor = parent
        on_branch = set(session.branch)
        walked: set[str] = set()  # ids repeat in hostile files, so parent links can form a cycle
        while cursor is not None and cursor not in on_branch and cursor not in walked:
            walked.add(cursor)
            path.append(cursor)
            node = session.nodes.get(cursor)
            cursor = node.parent_id if node else None
        keep = session.branch.index(cursor) + 1 if cursor is not None and cursor in on_branch else 0
        del session.branch[keep:]
        for analyzer in session.analyzers.values():
            analyzer.on_branch(session, keep)
        for entry_id in reversed(path):
            node = session.nodes.get(entry_id)
            if node is None:
                continue
            session.branch.append(entry_id)
            replayed = self.reread.entry(node.where)
            if replayed is not None:
                self._deliver(session, replayed, node, replay=True)
