"""A deterministic senpi simulator: writes an agent dir exactly as senpi would have written it.

Why this exists: the analysis recomputes senpi's fingerprints, continuity decisions and prompt payloads from
what senpi leaves on disk. To test it we need data whose *true* values are known. This package is an
independent re-implementation of senpi's behaviour (reference: ``shared/reference/senpi-formats.md`` and
``senpi-newer.md``); it deliberately imports nothing from the rest of ``core`` (only the standard library and
its own modules), so that a cross-check between the two means something. It ships in the wheel because the
demo data is its output, and it is a leaf: only the demo, the tests and the bench import it.

It writes ``logs/session.log`` (+ ``session.log.1`` by real size-based rotation), ``logs/compaction.log``,
transcripts under ``sessions/``, restart sidecars where the simulated build writes them, and ``--mode json``
event recordings under ``events/``. Every write is stamped by one shared clock and merged across concurrent
sessions in time order, so the files interleave like the real shared log. The manifest lists the true values
of every turn.

Modules, in dependency order:

* :mod:`~core.demo.sim.jsjson`: ``JSON.stringify`` and the canonical JSON; :mod:`~core.demo.sim.digest`: the
  digests and ``assistantContentHash`` rules;
* :mod:`~core.demo.sim.builds`: what each simulated release does differently (data, not version checks);
* :mod:`~core.demo.sim.directives`: omo's directive texts; :mod:`~core.demo.sim.prompt`: the serializers,
  the ultrawork dedupe and ``payloadBytes``;
* :mod:`~core.demo.sim.continuity`: registry entry, binding, decision and observation;
* :mod:`~core.demo.sim.ids`, :mod:`~core.demo.sim.texts`: seeded ids, clock formatting and content;
* :mod:`~core.demo.sim.sink`: time-ordered writes and rotation; :mod:`~core.demo.sim.manifest`: the truths;
* :mod:`~core.demo.sim.specs`: session scripts; :mod:`~core.demo.sim.session`: one session played;
* :mod:`~core.demo.sim.scenarios`: the demo and the corpus; :mod:`~core.demo.sim.generator`: ``generate()``.

Entry point: :func:`core.demo.sim.generator.generate`. Command line:
``python -m core.demo.sim --out DIR --scenario demo``.

Where the reference leaves a question open, this simulator chooses (and the manifest records the result):

* Builds before 2026.8.18-3 write no marker or invalidation entries and no sidecar, so the old-build demo
  session's rewritten commits are visible only in its event recording and in the next call's log line.
* The pending close cause is consumed by every observation emit, not only when it re-attributes a reason.
* In-memory bindings carry no ``sentPrefixHash`` (only sidecar-restored ones do); a rewritten commit forgets
  the in-memory binding only in builds that write invalidation entries.
* A failed call (pump error) closes the live entry with the error text and leaves a retry-checkpoint binding.
* ``message_update`` partials carry no transient ``index``/``partialJson`` at the last update, and no thinking
  ``startedAt``/``endedAt`` at all (agent-core copies them on just before ``message_end``).
* Ultrawork nesting (fail closed): a text block with an unclosed opening tag, or a closing tag before any
  opening tag, counts as a directive split across blocks.
* The new-omo reminder's ``customType`` is ``omo-ultrawork:reminder``; new builds put the environment-context
  message right before the user message (after the omo directive), so it folds into that user message.
* ``--mode json`` lines carry no clock of their own; their write times are in the manifest's ``replay``.
* The manifest's ``stable_*`` (what a build with a stable fingerprint would have logged) is one call's
  counterfactual: the real state before the call, without a pending fork that only a timing-only rewrite left
  (the analysis's definition; a whole alternative history would drift apart after a resume, see ``Build``).
"""
