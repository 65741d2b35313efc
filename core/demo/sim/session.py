"""One session: transcript entries, ``--mode json`` events and log lines, driven by the continuity state machine.

:class:`SessionSim` plays one :class:`~core.demo.sim.specs.SessionSpec` in the order senpi does things
(``senpi-formats.md`` §8 step 4) and yields its writes step by step, each step sorted by time.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

from core.demo.sim.builds import API_ID
from core.demo.sim.continuity import (
    IDLE_TTL_MS,
    CallStart,
    Continuity,
    Fingerprint,
    Observation,
    sanitize_terminal_failure,
)
from core.demo.sim.digest import (
    HASH_PROJECTED,
    HASH_TIMING_STRIPPED,
    HASH_VERBATIM,
    assistant_content_hash,
    digest,
    prefix_digest,
    sent_message_hash,
)
from core.demo.sim.directives import (
    TASK_USAGE_NEW,
    TASK_USAGE_OLD,
    ULTRAWORK_DIRECTIVE,
    ULTRAWORK_REMINDER,
    environment_context,
    is_ulw_prompt,
)
from core.demo.sim.ids import iso_ms, thinking_signature, tool_call_id, uuid4, uuid7
from core.demo.sim.jsjson import JsonObj, js_dumps
from core.demo.sim.manifest import CloseTruth, ProblemTruth, SessionTruth, TurnTruth
from core.demo.sim.prompt import Payload, delta_prompt_blocks, flatten_prompt_blocks, measure_payload, text_block
from core.demo.sim.sink import SESSION_LOG, Located, Write
from core.demo.sim.specs import AGENT_HOME, CallSpec, PromptSpec, SessionSpec
from core.demo.sim.texts import Texts

_PRICES = {"input": 5e-6, "output": 25e-6, "cacheRead": 0.5e-6, "cacheWrite": 6.25e-6}


def _usage(inp: int, out: int, cache_read: int, cache_write: int) -> JsonObj:
    """pi's Usage object with costs at the model's list prices (rounded like a float sum would print)."""
    tokens = {"input": inp, "output": out, "cacheRead": cache_read, "cacheWrite": cache_write}
    cost = {k: round(v * _PRICES[k], 8) for k, v in tokens.items()}
    cost["total"] = round(sum(cost.values()), 8)
    return {**tokens, "totalTokens": inp + out + cache_read + cache_write, "cost": cost}


_ZERO_USAGE = _usage(0, 0, 0, 0)


class SessionSim:
    """Plays one session script and yields its writes step by step, each step sorted by time.

    The provider context (``self.context``) and the transmitted-message hashes (``self.hashes``) grow as
    messages arrive; each call runs the real decision (``self.continuity``) and, for the counterfactual, the
    same decision from the same state without a pending fork that only a timing-only rewrite left
    (``self.shadow``, copied from the real state before each call: :meth:`Continuity.stable_copy`).
    """

    def __init__(self, spec: SessionSpec, rng: random.Random, scale: float) -> None:
        self.spec = spec
        self.build = spec.build
        self.rng = rng
        self.texts = Texts(rng, scale)
        self.clock = spec.start_ms
        self.session_id = uuid7(spec.start_ms, rng)
        encoded = re.sub(r"[/\\:]", "-", spec.cwd.lstrip("/\\"))
        stamp = iso_ms(spec.start_ms).replace(":", "-").replace(".", "-")
        self.transcript = f"sessions/--{encoded}--/{stamp}_{self.session_id}.jsonl"
        self.sidecar = self.transcript + ".claude-sdk-oauth-binding.json" if spec.build.markers else None
        self.events = f"events/{self.session_id}.jsonl" if spec.record_events else None
        self.thinking_level = spec.thinking_level
        self.context: list[JsonObj] = []
        self.transmitted: list[JsonObj] = []
        self.hashes: list[str] = []
        self.has_assistant = False
        self.context_chars = 0
        self.env_date: str | None = None
        self.ulw_armed = False
        self.continuity = Continuity(spec.build, self._new_sdk_session)
        self.shadow = Continuity(spec.build, self._new_sdk_session)
        self.truth = SessionTruth(
            session_id=self.session_id,
            build=spec.build.version,
            provider=spec.build.provider,
            model=spec.model,
            cwd=spec.cwd,
            transcript=self.transcript,
            events=self.events,
            sidecar=None,
            started=iso_ms(self.clock),
        )
        self.problems: list[ProblemTruth] = []
        self._buffer: list[bytes] | None = []
        self._ids: set[str] = set()
        self._last_id: str | None = None
        self._writes: list[Write] = []
        self._run_messages: list[JsonObj] = []
        self._turn_open = False
        self._compaction_generation = 0
        self._stale_compaction = False

    # -- plumbing ------------------------------------------------------------------------------------------
    def _new_sdk_session(self) -> str:
        return uuid7(self.clock, self.rng)

    def _new_id(self) -> str:
        while True:
            entry_id = f"{self.rng.getrandbits(32):08x}"
            if entry_id not in self._ids:
                self._ids.add(entry_id)
                return entry_id

    def _step(self) -> list[Write]:
        writes, self._writes = sorted(self._writes, key=lambda w: w.ms), []
        return writes

    def _emit(self, ms: int, path: str, data: bytes, locate: Located | None = None, kind: str = "append") -> None:
        self._writes.append(Write(ms, kind, path, data, locate))

    def _entry(self, entry: JsonObj, ms: int, locate: Located | None = None) -> str:
        """Append one transcript entry (buffered until senpi creates the file)."""
        line = (js_dumps(entry) + "\n").encode("utf-8")
        if self._buffer is not None:
            self._buffer.append(line)
        else:
            self._emit(ms, self.transcript, line, locate)
        return entry.get("id", "")

    def _flush_transcript(self, ms: int) -> None:
        """senpi creates the session file with everything buffered so far in one write."""
        if self._buffer is not None:
            self._emit(ms, self.transcript, b"".join(self._buffer))
            self._buffer = None

    def _link(self, entry_id: str) -> str | None:
        parent, self._last_id = self._last_id, entry_id
        return parent

    def _message_entry(self, message: JsonObj, ms: int) -> str:
        entry_id = self._new_id()
        entry = {
            "type": "message",
            "id": entry_id,
            "parentId": self._link(entry_id),
            "timestamp": iso_ms(ms),
            "message": message,
        }
        return self._entry(entry, ms)

    def _custom_entry(self, custom_type: str, data: JsonObj, ms: int) -> str:
        entry_id = self._new_id()
        entry = {
            "type": "custom",
            "customType": custom_type,
            "data": data,
            "id": entry_id,
            "parentId": self._link(entry_id),
            "timestamp": iso_ms(ms),
        }
        return self._entry(entry, ms)

    def _event(self, event: JsonObj, ms: int) -> None:
        if self.events is not None:
            self._emit(ms, self.events, (js_dumps(event) + "\n").encode("utf-8"))

    def _message_events(self, message: JsonObj, ms: int) -> None:
        self._event({"type": "message_start", "message": message}, ms)
        self._event({"type": "message_end", "message": message}, ms)
        self._run_messages.append(message)

    def _log(self, ms: int, event: str, data: JsonObj, level: str = "info", locate: Located | None = None) -> None:
        line = {"ts": iso_ms(ms), "level": level, "event": event, **data}
        self._emit(ms, SESSION_LOG, (js_dumps(line) + "\n").encode("utf-8"), locate)

    def _stamp(self) -> JsonObj:
        """The AgentSession logger's context stamp of newer builds (sessionId, provider, model first)."""
        if not self.build.session_id_on_log:
            return {}
        return {"sessionId": self.session_id, "provider": self.build.provider, "model": self.spec.model}

    def _log_close(self, ms: int, raw: str, reason: str, when: str) -> None:
        close = CloseTruth(iso_ms(ms), reason, raw, when)
        data: JsonObj = {"reason": reason}
        if self.build.session_id_on_log:
            data["sessionId"] = self.session_id
        self._log(ms, "claude_sdk_oauth_session_close", data, locate=close.log)
        self.truth.closes.append(close)

    def _log_continuity(self, ms: int, obs: Observation, turn: TurnTruth) -> None:
        data: JsonObj = {"kind": obs.kind, "reason": obs.reason}
        if obs.count is not None:
            data["count"] = obs.count
        if self.build.session_id_on_log:
            data["sessionId"] = self.session_id
        self._log(ms, "claude_sdk_oauth_session_continuity", data, locate=turn.log)
        turn.log_ts = iso_ms(ms)

    def _compaction(self, ms: int, event: str) -> None:
        if self.spec.compaction_log:
            line = {
                "ts": iso_ms(ms),
                "level": "debug",
                "event": event,
                "generation": self._compaction_generation,
                "origin": "speculative",
            }
            self._emit(ms, "logs/compaction.log", (js_dumps(line) + "\n").encode("utf-8"))

    def _fingerprint(self) -> Fingerprint:
        """Opaque identity hashes; the thinking level is part of ``toolsetHash`` (§4.8)."""
        tools = sorted(self.spec.context_tools)
        toolset = {
            "tools": tools,
            "reasoning": {"thinking": self.thinking_level != "off", "effort": self.thinking_level},
            "cwd": self.spec.cwd,
        }
        return Fingerprint(
            self.spec.account, self.spec.model, digest(f"system prompt for {self.spec.cwd}"), digest(toolset)
        )

    # -- context -------------------------------------------------------------------------------------------
    def _transmit(self, llm: JsonObj, chars: int) -> None:
        self.context.append(llm)
        self.transmitted.append(llm)
        self.hashes.append(sent_message_hash(llm))
        self.context_chars += chars

    def _custom_message(
        self, custom_type: str, content: str, ms: int, details: JsonObj | None, transmit: bool = True
    ) -> None:
        """A hidden extension message: a ``custom_message`` entry, a user-role message in the context."""
        entry_id = self._new_id()
        entry: JsonObj = {"type": "custom_message", "customType": custom_type, "content": content, "display": False}
        message: JsonObj = {"role": "custom", "customType": custom_type, "content": content, "display": False}
        if details is not None:
            entry["details"] = details
            message["details"] = details
        message["timestamp"] = ms
        entry.update({"id": entry_id, "parentId": self._link(entry_id), "timestamp": iso_ms(ms)})
        self._entry(entry, ms)
        self._message_events(message, ms)
        if transmit:
            self._transmit({"role": "user", "content": [text_block(content)]}, len(content))

    # -- the session ---------------------------------------------------------------------------------------
    def run(self) -> Iterator[list[Write]]:
        """The whole session as steps of writes; each step's writes are later than the previous step's."""
        self._start()
        yield self._step()
        for number, prompt in enumerate(self.spec.prompts(self.texts)):
            yield from self._prompt(number, prompt)
        self.clock += self.rng.randint(5_000, 60_000)
        closed = self.continuity.close("quit")
        if closed:
            self._log_close(self.clock, "quit", closed, "shutdown")
        self._flush_transcript(self.clock)
        if self.spec.bad_transcript_lines:
            self._bad_transcript_lines()
        self._finish_truth()
        yield self._step()
        self._release()

    def _release(self) -> None:
        """Drop the history once the session is over: only its truth stays, so a corpus streams."""
        self.context, self.transmitted, self.hashes = [], [], []
        self.continuity = self.shadow = Continuity(self.build, self._new_sdk_session)

    def _start(self) -> None:
        ms = self.clock
        self._entry(
            {"type": "session", "version": 3, "id": self.session_id, "timestamp": iso_ms(ms), "cwd": self.spec.cwd}, ms
        )
        entry_id = self._new_id()
        self._entry(
            {
                "type": "model_change",
                "id": entry_id,
                "parentId": self._link(entry_id),
                "timestamp": iso_ms(ms + 1),
                "provider": self.build.provider,
                "modelId": self.spec.model,
            },
            ms,
        )
        entry_id = self._new_id()
        self._entry(
            {
                "type": "thinking_level_change",
                "id": entry_id,
                "parentId": self._link(entry_id),
                "timestamp": iso_ms(ms + 2),
                "thinkingLevel": self.thinking_level,
            },
            ms,
        )
        self._event(
            {"type": "session", "version": 3, "id": self.session_id, "timestamp": iso_ms(ms), "cwd": self.spec.cwd}, ms
        )
        self.clock += 2

    def _prompt(self, number: int, prompt: PromptSpec) -> Iterator[list[Write]]:
        self.clock += prompt.gap_ms
        self._reap_if_idle()
        if prompt.thinking_level and prompt.thinking_level != self.thinking_level:
            self._change_thinking_level(prompt.thinking_level)  # senpi writes and announces only a real change
        self._user_input(number, prompt)
        yield self._step()
        for index, call in enumerate(prompt.calls):
            if index:
                self._event({"type": "turn_start"}, self.clock)
            self._call(number, call)
            yield self._step()
        self._event({"type": "agent_end", "messages": self._run_messages}, self.clock)
        self._run_messages = []
        yield self._step()

    def _reap_if_idle(self) -> None:
        """The idle reaper (an unref'd 30-minute timer) closes a live entry that nobody used."""
        last_used = self.continuity.last_used()
        if last_used is None:
            return
        reap_at = last_used + IDLE_TTL_MS + self.rng.randint(200, 59_000)
        if reap_at < self.clock:
            closed = self.continuity.close("idle_ttl")
            if closed:
                self._log_close(reap_at, "idle_ttl", closed, "idle_reaper")

    def _change_thinking_level(self, level: str) -> None:
        ms = self.clock
        self.thinking_level = level
        entry_id = self._new_id()
        self._entry(
            {
                "type": "thinking_level_change",
                "id": entry_id,
                "parentId": self._link(entry_id),
                "timestamp": iso_ms(ms),
                "thinkingLevel": level,
            },
            ms,
        )
        closed = self.continuity.select_thinking_level()
        if closed:
            self._log_close(ms + 1, "thinking_level_selected", closed, "thinking_level")
        self.clock += self.rng.randint(2_000, 9_000)

    def _user_input(self, number: int, prompt: PromptSpec) -> None:
        """The user's prompt with what omo and senpi add around it (§7, newer §5.2)."""
        ms, build, text = self.clock, self.build, prompt.text
        ulw = self.spec.omo and is_ulw_prompt(text)
        self.truth.prompts += 1
        self.truth.ulw_prompts += int(ulw)
        self._event({"type": "agent_start"}, ms)
        self._event({"type": "turn_start"}, ms)
        if ulw and not build.new_omo:
            text = ULTRAWORK_DIRECTIVE + "\n" + text
        if ulw and build.new_omo:
            if not self.ulw_armed:
                self._custom_message("omo-ultrawork:directive", ULTRAWORK_DIRECTIVE, ms, None)
                self.ulw_armed = True
            else:
                self._custom_message("omo-ultrawork:reminder", ULTRAWORK_REMINDER, ms, None)
            ms += 1
        env_blocks: list[JsonObj] = []
        date = iso_ms(ms)[:10]
        if build.env_context and self.env_date != date:
            env = environment_context(self.spec.cwd, date)
            self._custom_message(
                "environment-context", env, ms, {"cwd": self.spec.cwd, "currentDate": date}, transmit=False
            )
            env_blocks = [text_block(env)]  # folded into the user message that follows (2026.9.24-3)
            self.env_date = date
            ms += 1
        content = [text_block(text)]
        message = {"role": "user", "content": content, "timestamp": ms}
        entry_id = self._message_entry(message, ms)
        if prompt.hostile:
            self.truth.hostile_entry_ids.append(entry_id)
        self._message_events(message, ms)
        self._transmit(
            {"role": "user", "content": env_blocks + content}, len(text) + sum(len(b["text"]) for b in env_blocks)
        )
        if build.file_at_first_user:
            self._flush_transcript(ms)
        if number == 0 and self.spec.omo:
            ms += self.rng.randint(1, 4)
            self._custom_message("senpi-task.usage", TASK_USAGE_NEW if build.new_omo else TASK_USAGE_OLD, ms, {})
        if self.rng.random() < 0.4:
            self._compaction_generation += 1
            self._compaction(ms + 3, "speculative_started")
            self._stale_compaction = True  # logged during the first call, when new messages make it stale
        self.clock = ms + self.rng.randint(5, 40)

    # -- one provider call ---------------------------------------------------------------------------------
    def _call(self, number: int, call: CallSpec) -> None:
        """Decide, stream, log, commit, persist: one assistant message in the order senpi does it (§8 step 4)."""
        rng = self.rng
        t0 = self.clock + rng.randint(3, 25)
        hashes = list(self.hashes)
        fp = self._fingerprint()
        self.shadow = self.continuity.stable_copy()
        start = self.continuity.begin_call(hashes, fp, t0, has_assistant=self.has_assistant)
        stable = self.shadow.begin_call(hashes, fp, t0, has_assistant=self.has_assistant)
        turn = TurnTruth(index=len(self.truth.turns), prompt=number, ts=iso_ms(t0))
        self.truth.turns.append(turn)
        payload = self._payload(start)
        self._record_decision(turn, start, stable, payload, len(hashes))
        if start.closed:
            resumed = start.decision.kind in ("reattach", "fork")
            raw = "reattach" if resumed else (start.decision.reason or "registry_miss")
            self._log_close(t0 + rng.randint(1, 4), raw, start.closed, "call_start")
            turn.close_before = start.closed
        if self._stale_compaction:
            self._compaction(t0 + rng.randint(300, 700), "speculative_stale")
            self._stale_compaction = False
        if call.error:
            self._failed_call(turn, call.error, t0, hashes)
            return
        base = self._assistant_base(t0)
        self._event({"type": "message_start", "message": {**base, "content": []}}, t0)
        final, partial, t_end = self._stream(base, call, t0 + rng.randint(700, 2_200) + payload.bytes // 40)
        t_result = t_end + rng.randint(40, 250)
        log_ms = t_result + rng.randint(2, 12)
        obs = start.observation
        details: JsonObj = {"kind": obs.kind, "reason": obs.reason}
        if obs.count is not None:
            details["deltaMessages"] = obs.count
        if start.flatten:
            details["payloadBytes"] = payload.bytes
            details["collapsedDirectives"] = payload.collapsed
        diagnostic = {
            "type": "claude_sdk_oauth_session_continuity",
            "timestamp": log_ms - rng.choice((0, 0, 1)),
            "details": details,
        }
        message = {
            **base,
            "content": final,
            "usage": self._call_usage(start.flatten, payload, final),
            "stopReason": "toolUse" if call.tools else "stop",
            "diagnostics": [diagnostic],
        }
        sdk_uuid = uuid4(rng)
        self.continuity.finish_call(hashes, sdk_uuid, t_result)
        self._log_continuity(log_ms, obs, turn)
        self._event({"type": "message_end", "message": message}, log_ms + 1)
        ms = self._commit(turn, message, {**message, "content": partial}, hashes, sdk_uuid, fp, log_ms)
        turn.entry_id = self._message_entry(message, ms)
        self._flush_transcript(ms)  # older builds create the file at the first assistant message
        self.context.append(message)
        self.has_assistant = True
        self.context_chars += sum(len(js_dumps(b)) for b in final)
        self._run_messages.append(message)
        turn.stop_reason = message["stopReason"]
        turn.thinking = call.thinking
        turn.tool_calls = len(call.tools)
        results = self._run_tools(call, [b for b in final if b["type"] == "toolCall"], ms + rng.randint(1, 5))
        self._event({"type": "turn_end", "message": message, "toolResults": results}, self.clock)

    def _payload(self, start: CallStart) -> Payload:
        """Serialize what this call sends (flatten or delta) and measure it."""
        tools = self.spec.context_tools
        if start.flatten:
            blocks = flatten_prompt_blocks(self.context, tools, self.build)
        else:
            blocks = delta_prompt_blocks(self.transmitted[start.decision.start :], tools, self.build)
        return measure_payload(blocks, self.build, flatten=start.flatten)

    def _record_decision(self, turn: TurnTruth, start: CallStart, stable: CallStart, payload: Payload, n: int) -> None:
        obs = start.observation
        turn.kind, turn.reason, turn.count = obs.kind, obs.reason, obs.count
        turn.decision, turn.decision_from = start.decision.kind, start.decision.start
        turn.decision_reason = start.decision.reason
        turn.first_turn = start.first_turn
        turn.sent_messages = n
        turn.payload_bytes, turn.payload_bytes_raw = payload.bytes, payload.bytes_raw
        turn.directive_copies, turn.directive_bytes = payload.directive_copies, payload.directive_bytes
        if start.flatten:
            turn.logged_payload_bytes, turn.collapsed_directives = payload.bytes, payload.collapsed
        turn.resend_from_volatile = start.from_volatile and obs.kind in ("fork", "flatten")
        turn.stable_kind, turn.stable_reason = stable.observation.kind, stable.observation.reason
        turn.stable_count = stable.observation.count
        turn.stable_payload_bytes = self._payload(stable).bytes

    def _assistant_base(self, t0: int) -> JsonObj:
        """The provider's empty-output template: key order of every assistant message it produces."""
        return {
            "role": "assistant",
            "content": [],
            "api": API_ID,
            "provider": self.build.provider,
            "model": self.spec.model,
            "usage": _ZERO_USAGE,
            "stopReason": "stop",
            "timestamp": t0,
        }

    def _call_usage(self, flatten: bool, payload: Payload, final: list[JsonObj]) -> JsonObj:
        out = sum(len(js_dumps(b)) for b in final) // 4 + 12
        if flatten:
            return _usage(6, out, 0, payload.bytes // 4 + 2_800)
        return _usage(6, out, self.context_chars // 4 + 2_800, payload.bytes // 4)

    def _update(self, base: JsonObj, partial: list[JsonObj], event: JsonObj, ms: int) -> None:
        snapshot = {**base, "content": list(partial)}
        self._event(
            {"type": "message_update", "message": snapshot, "assistantMessageEvent": {**event, "partial": snapshot}}, ms
        )

    def _stream(self, base: JsonObj, call: CallSpec, t: int) -> tuple[list[JsonObj], list[JsonObj], int]:
        """Stream the content blocks as ``message_update`` events. Returns (final, last partial, end time).

        Partials never carry thinking ``startedAt``/``endedAt``: agent-core copies them onto the message only
        after the last ``message_update``, which is what made old builds commit such turns as rewritten.
        """
        rng, final, partial = self.rng, [], []
        if call.thinking:
            text, signature = self.texts.sentences(rng.randint(3, 7)), thinking_signature(rng)
            started, i = t, len(partial)
            partial.append({"type": "thinking", "thinking": "", "thinkingSignature": ""})
            self._update(base, partial, {"type": "thinking_start", "contentIndex": i}, t)
            half = len(text) // 2
            for piece, upto in ((text[:half], half), (text[half:], len(text))):
                t += rng.randint(300, 2_500)
                partial[i] = {"type": "thinking", "thinking": text[:upto], "thinkingSignature": ""}
                self._update(base, partial, {"type": "thinking_delta", "contentIndex": i, "delta": piece}, t)
            t += rng.randint(20, 200)
            partial[i] = {"type": "thinking", "thinking": text, "thinkingSignature": signature}
            self._update(base, partial, {"type": "thinking_end", "contentIndex": i, "content": text}, t)
            final.append({**partial[i], "startedAt": started, "endedAt": t})
        if call.text:
            i = len(partial)
            partial.append({"type": "text", "text": ""})
            t += rng.randint(50, 400)
            self._update(base, partial, {"type": "text_start", "contentIndex": i}, t)
            t += rng.randint(200, 2_000)
            partial[i] = {"type": "text", "text": call.text}
            self._update(base, partial, {"type": "text_delta", "contentIndex": i, "delta": call.text}, t)
            t += rng.randint(5, 60)
            self._update(base, partial, {"type": "text_end", "contentIndex": i, "content": call.text}, t)
            final.append(partial[i])
        for tool in call.tools:
            i, call_id = len(partial), tool_call_id(rng)
            partial.append({"type": "toolCall", "id": call_id, "name": tool.name, "arguments": {}, "partialJson": ""})
            t += rng.randint(50, 400)
            self._update(base, partial, {"type": "toolcall_start", "contentIndex": i}, t)
            args_json = js_dumps(tool.args)
            partial[i] = {
                "type": "toolCall",
                "id": call_id,
                "name": tool.name,
                "arguments": tool.args,
                "partialJson": args_json,
            }
            t += rng.randint(100, 1_500)
            self._update(base, partial, {"type": "toolcall_delta", "contentIndex": i, "delta": args_json}, t)
            block = {"type": "toolCall", "id": call_id, "name": tool.name, "arguments": tool.args}
            partial[i] = block
            t += rng.randint(5, 60)
            self._update(base, partial, {"type": "toolcall_end", "contentIndex": i, "toolCall": block}, t)
            final.append(block)
        return final, partial, t

    def _commit(
        self,
        turn: TurnTruth,
        message: JsonObj,
        captured: JsonObj,
        hashes: list[str],
        sdk_uuid: str,
        fp: Fingerprint,
        log_ms: int,
    ) -> int:
        """The message_end boundary check (§3.6/§3.7) and its entries; returns the assistant entry's time."""
        rule = self.build.hash_rule
        turn.capture_hash = assistant_content_hash(captured, rule)
        turn.commit_hash = assistant_content_hash(message, rule)
        self._hashes_under_every_rule(turn, message)
        rewritten = turn.capture_hash != turn.commit_hash
        turn.volatile_only_rewrite = (
            rewritten and assistant_content_hash(captured, HASH_TIMING_STRIPPED) == turn.hash_timing_stripped
        )
        turn.commit = "rewritten" if rewritten else "clean"
        if rewritten:
            self.continuity.commit_rewritten(turn.volatile_only_rewrite)
        ms = log_ms + self.rng.randint(2, 6)
        if not self.build.markers:
            return ms + self.rng.randint(1, 3)
        if rewritten:
            self._custom_entry(
                "claude-sdk-oauth-binding",
                {"schemaVersion": 1, "invalidated": True, "reason": "assistant_rewritten"},
                ms,
            )
            turn.invalidation = True
        else:
            marker_id = self._custom_entry("claude-sdk-oauth-binding", {"schemaVersion": 2, "marker": True}, ms)
            turn.marker = True
            self._write_sidecar(ms + 1, marker_id, message, hashes, sdk_uuid, fp)
        return ms + self.rng.randint(2, 4)

    @staticmethod
    def _hashes_under_every_rule(turn: TurnTruth, message: JsonObj) -> None:
        """The transcribed message's ``assistantContentHash`` under all three rules, whatever the build uses."""
        turn.hash_verbatim = assistant_content_hash(message, HASH_VERBATIM)
        turn.hash_timing_stripped = assistant_content_hash(message, HASH_TIMING_STRIPPED)
        turn.hash_projected = assistant_content_hash(message, HASH_PROJECTED)

    def _write_sidecar(
        self, ms: int, marker_id: str, message: JsonObj, hashes: list[str], sdk_uuid: str, fp: Fingerprint
    ) -> None:
        """The restart sidecar (§4.7), rewritten atomically at every clean resident commit."""
        entry = self.continuity.entry
        assert entry is not None and self.sidecar is not None
        record = {
            "schemaVersion": 1,
            "sessionPath": f"{AGENT_HOME}/{self.transcript}",
            "sessionId": self.session_id,
            "markerEntryId": marker_id,
            "sdkSessionId": entry.sdk_session_id,
            "sentCount": len(hashes),
            "sentPrefixHash": prefix_digest(hashes),
            "assistantContentHash": assistant_content_hash(message, self.build.hash_rule),
            "lastAssistantUuid": sdk_uuid,
            "accountName": fp.account,
            "modelId": fp.model,
            "systemPromptHash": fp.system_prompt_hash,
            "toolsetHash": fp.toolset_hash,
        }
        self._emit(ms, self.sidecar, (js_dumps(record) + "\n").encode("utf-8"), kind="replace")
        self.truth.sidecar = self.sidecar

    def _run_tools(self, call: CallSpec, blocks: list[JsonObj], t: int) -> list[JsonObj]:
        """Execute the tool calls one after another; each result is an entry and a transmitted message."""
        results = []
        for tool, block in zip(call.tools, blocks, strict=True):
            self._event(
                {"type": "tool_execution_start", "toolCallId": block["id"], "toolName": tool.name, "args": tool.args}, t
            )
            t += tool.duration_ms + self.rng.randint(0, 50)
            content = [text_block(tool.output)]
            self._event(
                {
                    "type": "tool_execution_end",
                    "toolCallId": block["id"],
                    "toolName": tool.name,
                    "result": {"content": content},
                    "isError": False,
                },
                t,
            )
            result = {
                "role": "toolResult",
                "toolCallId": block["id"],
                "toolName": tool.name,
                "content": content,
                "isError": False,
                "timestamp": t,
            }
            self._message_events(result, t)
            t += self.rng.randint(0, 2)
            self._message_entry(result, t)
            self._transmit(result, len(tool.output))
            results.append(result)
        self.clock = t
        return results

    def _failed_call(self, turn: TurnTruth, error: str, t0: int, hashes: list[str]) -> None:
        """Every attempt failed (§2.5 path 3 / newer ``failed``): close, terminal line, provider_error."""
        rng, build = self.rng, self.build
        base = self._assistant_base(t0)
        self._event({"type": "message_start", "message": base}, t0)
        t_fail = t0 + rng.randint(2_500, 12_000)
        closed = self.continuity.fail_call(hashes, error)
        if closed:
            self._log_close(t_fail, error, closed, "failure")
        obs = Observation("failed" if build.failed_kind else "flatten", sanitize_terminal_failure(error), None)
        turn.kind, turn.reason, turn.count = obs.kind, obs.reason, None
        turn.stable_kind, turn.stable_reason, turn.stable_count = obs.kind, obs.reason, None
        turn.logged_payload_bytes = turn.collapsed_directives = None
        log_ms = t_fail + rng.randint(1, 3)
        self._log_continuity(log_ms, obs, turn)
        err_ms = log_ms + rng.randint(2, 6)
        shown = error if len(error) <= 200 else error[:197] + "..."
        self._log(err_ms, "provider_error", {**self._stamp(), "kind": "error", "error": shown}, level="warn")
        diagnostic = {
            "type": "claude_sdk_oauth_session_continuity",
            "timestamp": log_ms,
            "details": {"kind": obs.kind, "reason": obs.reason},
        }
        message = {**base, "stopReason": "error", "diagnostics": [diagnostic], "errorMessage": error}
        self._hashes_under_every_rule(turn, message)  # no boundary check runs: capture/commit hashes stay empty
        self._event({"type": "message_end", "message": message}, err_ms + 1)
        ms = err_ms + rng.randint(2, 4)
        turn.entry_id = self._message_entry(message, ms)
        self._flush_transcript(ms)
        if not build.drop_failed_assistants:
            self.context.append(message)
            self.has_assistant = True
        self._run_messages.append(message)
        turn.commit, turn.stop_reason = "failed", "error"
        self._event({"type": "turn_end", "message": message, "toolResults": []}, ms)
        self.clock = ms

    # -- the end of a session ------------------------------------------------------------------------------
    def _bad_transcript_lines(self) -> None:
        """Lines a crash or a broken tool leaves behind: bad JSON, invalid UTF-8, a line cut mid-write."""
        ms, parent = self.clock, self._last_id
        stamp = iso_ms(ms).encode()
        lines = (
            ("bad_json", b'{"type":"custom","customType":"pi-rules.scan","data":{"rules":3},,"id":"0badc0de"}\n'),
            (
                "invalid_utf8",
                b'{"type":"custom","customType":"pi-rules.scan","data":{"note":"\xff\xfe\xfa mangled"},'
                b'"id":"0badf00d","parentId":"' + str(parent).encode() + b'","timestamp":"' + stamp + b'"}\n',
            ),
            (
                "truncated",
                b'{"type":"message","id":"5eed5eed","parentId":"0badf00d","timestamp":"'
                + stamp
                + b'","message":{"role":"user","content":[{"type":"text","text":"this line was cut off mi',
            ),
        )
        for i, (kind, data) in enumerate(lines):
            problem = ProblemTruth(self.transcript, kind)
            self._emit(ms + 1_000 * (i + 1), self.transcript, data, problem.log)
            self.problems.append(problem)
        self.clock = ms + 1_000 * len(lines)

    def _finish_truth(self) -> None:
        self.truth.ended = iso_ms(self.clock)
        counts: dict[str, int] = {}
        for turn in self.truth.turns:
            counts[turn.kind] = counts.get(turn.kind, 0) + 1
        self.truth.counts = counts
