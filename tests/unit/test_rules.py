"""The ``[rules.<area>]`` dataclasses (jobs.rules): one per area, importable from their gold
modules too, each field's type and bounds checked on construction."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from jobs.errors import ConfigError
from jobs.gold import (
    kip48_tokens,
    kip368_reauth,
    kip507_connect_signing,
    kip590_forwarding,
    kip801_authorizer,
)
from jobs.rules import (
    METADATA_MODES,
    AuthorizerRules,
    ConnectRules,
    ForwardingRules,
    ReauthRules,
    RulesTables,
    TokenRules,
    rules_adapter,
)
from schemas.token_events import MODE_KRAFT, MODE_ZOOKEEPER
from transforms.auth_links import HANDSHAKE_MAX_GAP_MS, IDLE_MS, PAIRING_WINDOW_MS
from transforms.gold.kip368_reauth.config import DEFAULT_CAPABILITIES
from transforms.gold.kip368_reauth.sessions import ReplayWindows


def test_each_area_has_its_class_also_where_its_builder_is() -> None:
    assert {name: info.annotation for name, info in RulesTables.model_fields.items()} == {
        "reauth": ReauthRules,
        "tokens": TokenRules,
        "forwarding": ForwardingRules,
        "connect": ConnectRules,
        "authorizer": AuthorizerRules,
    }
    assert kip368_reauth.ReauthRules is ReauthRules
    assert kip48_tokens.TokenRules is TokenRules
    assert kip590_forwarding.ForwardingRules is ForwardingRules
    assert kip507_connect_signing.ConnectRules is ConnectRules
    assert kip801_authorizer.AuthorizerRules is AuthorizerRules


def test_defaults_are_kafkas_and_the_replays() -> None:
    reauth = ReauthRules()
    assert (reauth.handshake_max_gap_ms, reauth.pairing_window_ms, reauth.idle_ms) == tuple(
        ReplayWindows()
    )
    assert (HANDSHAKE_MAX_GAP_MS, PAIRING_WINDOW_MS, IDLE_MS) == (1_000, 60_000, 600_000)
    assert reauth.readiness_candidates_ms == (900_000, 3_600_000, 28_800_000, 86_400_000)
    assert reauth.capabilities == DEFAULT_CAPABILITIES
    assert ForwardingRules().pairing_tolerance_ms == 30_000  # request.timeout.ms
    assert ConnectRules().stale_key_grace_ms == 60_000  # DistributedHerder: one minute
    assert set(METADATA_MODES) == {"auto", MODE_ZOOKEEPER, MODE_KRAFT}


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: TokenRules(metadata_mode="etcd"), "TokenRules.metadata_mode: Input should be"),  # type: ignore[arg-type]
        (lambda: TokenRules(creation_burst_threshold=0), "TokenRules.creation_burst_threshold"),
        (lambda: TokenRules(lifetime_factor=0.0), "TokenRules.lifetime_factor"),
        (lambda: TokenRules(clock_tolerance_ms=-1), "TokenRules.clock_tolerance_ms"),
        (lambda: ReauthRules(capabilities=("kafka",)), "ReauthRules.capabilities"),
        (lambda: ReauthRules(readiness_candidates_ms=(0,)), "ReauthRules.readiness_candidates_ms"),
        (lambda: ConnectRules(retry_gap_ms="2m"), "ConnectRules.retry_gap_ms"),  # type: ignore[arg-type]
        (
            lambda: AuthorizerRules(denial_burst_threshold=True),
            "AuthorizerRules.denial_burst_threshold",
        ),
        (lambda: ForwardingRules(pairing_tolerance_ms=1.5), "ForwardingRules.pairing_tolerance_ms"),  # type: ignore[arg-type]
    ],
)
def test_a_direct_construction_checks_types_and_bounds(
    make: Callable[[], object], message: str
) -> None:
    with pytest.raises(ConfigError, match=f"^{message}"):
        make()


def test_a_valid_construction_keeps_its_values() -> None:
    rules = TokenRules(creation_burst_threshold=1, lifetime_factor=2, metadata_mode="kraft")
    assert dataclasses.astuple(rules) == (1, 3_600_000, 2, "kraft", 60_000)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.metadata_mode = "auto"  # type: ignore[misc]


def test_the_validator_turns_toml_arrays_into_tuples_and_ints_into_floats() -> None:
    table = {"readiness_candidates_ms": [1, 2], "capabilities": ["a>=1.0"], "idle_ms": 5}
    reauth = rules_adapter(ReauthRules).validate_python(table)
    assert reauth == ReauthRules(
        readiness_candidates_ms=(1, 2), capabilities=("a>=1.0",), idle_ms=5
    )
    tokens = rules_adapter(TokenRules).validate_python({"lifetime_factor": 3})
    assert type(tokens.lifetime_factor) is float
    assert rules_adapter(TokenRules) is rules_adapter(TokenRules)  # built once
