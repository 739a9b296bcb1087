"""A Prometheus text exposition of the server's counters (no client library needed)."""

from __future__ import annotations

import bisect
import threading
from collections import Counter

LATENCY_BUCKETS_S: tuple[float, ...] = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)  # fmt: skip


class Metrics:
    """Sessions, steps, errors by code and a step-latency histogram (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.active_sessions = 0
        self.sessions_opened = 0
        self.sessions_refused = 0
        self.sessions_expired = 0
        self.steps: Counter[str] = Counter()  # by env id
        self.resets: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()  # by code (protocol codes and env tool errors)
        self.retrieved_queries = 0
        self.retrieve_requests = 0
        self._bucket_counts = [0] * (len(LATENCY_BUCKETS_S) + 1)
        self._latency_sum = 0.0

    def session_opened(self) -> None:
        with self._lock:
            self.active_sessions += 1
            self.sessions_opened += 1

    def session_closed(self, *, expired: bool = False) -> None:
        with self._lock:
            self.active_sessions -= 1
            self.sessions_expired += int(expired)

    def refused(self) -> None:
        with self._lock:
            self.sessions_refused += 1

    def reset(self, env_id: str) -> None:
        with self._lock:
            self.resets[env_id] += 1

    def step(self, env_id: str, seconds: float, tool_error: str | None) -> None:
        """Count one env step, its latency and the tool error it reported, if any."""
        with self._lock:
            self.steps[env_id] += 1
            self._bucket_counts[bisect.bisect_left(LATENCY_BUCKETS_S, seconds)] += 1
            self._latency_sum += seconds
            if tool_error:
                self.errors[tool_error] += 1

    def retrieved(self, queries: int) -> None:
        """Count one ``POST /retrieve`` of ``queries`` queries."""
        with self._lock:
            self.retrieve_requests += 1
            self.retrieved_queries += queries

    def error(self, code: str) -> None:
        with self._lock:
            self.errors[code] += 1

    def render(self) -> str:
        """The Prometheus text format (version 0.0.4), in a stable order."""
        with self._lock:
            lines = [
                "# HELP wikigym_sessions_active WebSocket sessions held now.",
                "# TYPE wikigym_sessions_active gauge",
                f"wikigym_sessions_active {self.active_sessions}",
                "# HELP wikigym_sessions_total Sessions by outcome.",
                "# TYPE wikigym_sessions_total counter",
                f'wikigym_sessions_total{{outcome="opened"}} {self.sessions_opened}',
                f'wikigym_sessions_total{{outcome="refused"}} {self.sessions_refused}',
                f'wikigym_sessions_total{{outcome="expired"}} {self.sessions_expired}',
                "# HELP wikigym_resets_total Episode resets by env id.",
                "# TYPE wikigym_resets_total counter",
                *(
                    f'wikigym_resets_total{{env_id="{k}"}} {v}'
                    for k, v in sorted(self.resets.items())
                ),
                "# HELP wikigym_steps_total Env steps by env id.",
                "# TYPE wikigym_steps_total counter",
                *(
                    f'wikigym_steps_total{{env_id="{k}"}} {v}'
                    for k, v in sorted(self.steps.items())
                ),
                "# HELP wikigym_retrieve_requests_total POST /retrieve requests answered.",
                "# TYPE wikigym_retrieve_requests_total counter",
                f"wikigym_retrieve_requests_total {self.retrieve_requests}",
                "# HELP wikigym_retrieve_queries_total Queries searched by POST /retrieve.",
                "# TYPE wikigym_retrieve_queries_total counter",
                f"wikigym_retrieve_queries_total {self.retrieved_queries}",
                "# HELP wikigym_errors_total Protocol errors and tool errors by code.",
                "# TYPE wikigym_errors_total counter",
                *(
                    f'wikigym_errors_total{{code="{k}"}} {v}'
                    for k, v in sorted(self.errors.items())
                ),
                "# HELP wikigym_step_seconds Env step latency (the step itself, in its thread).",
                "# TYPE wikigym_step_seconds histogram",
            ]
            cumulative = 0
            for bound, count in zip(LATENCY_BUCKETS_S, self._bucket_counts, strict=False):
                cumulative += count
                lines.append(f'wikigym_step_seconds_bucket{{le="{bound}"}} {cumulative}')
            total = sum(self._bucket_counts)
            lines.append(f'wikigym_step_seconds_bucket{{le="+Inf"}} {total}')
            lines.append(f"wikigym_step_seconds_sum {self._latency_sum:.6f}")
            lines.append(f"wikigym_step_seconds_count {total}")
        return "\n".join(lines) + "\n"
