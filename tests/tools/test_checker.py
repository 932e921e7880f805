"""The function-call checker: names, required/unexpected parameters, types,
enums, values, defaults, parallel calls, malformed input, both formats."""

from __future__ import annotations

import pytest
from gym_llm_tools import score_tool_calls
from gym_llm_tools.catalog import schema_of

TOOLS = [schema_of("get_weather"), schema_of("set_timer"), schema_of("order_food"), schema_of("turn_on_lights")]
WEATHER = {"name": "get_weather", "arguments": {"city": "Paris"}}
TIMER = {"name": "set_timer", "arguments": {"minutes": 10}}


def score(response, gold=(WEATHER,), **kw):
    return score_tool_calls(response, list(gold), TOOLS, **kw)


def test_exact_call_scores_one_in_both_formats(formats):
    for encode in formats.values():
        r = score(encode([WEATHER]))
        assert r.score == 1.0 and r.components == {"matched": 1.0, "valid": 1.0, "exact": 1.0}


def test_openai_arguments_may_be_a_dict_or_a_json_string():
    msg = {"role": "assistant", "content": None,
           "tool_calls": [{"id": "x", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}
    assert score(msg).score == 1.0


@pytest.mark.parametrize("call, why", [
    ({"name": "get_forecast", "arguments": {"city": "Paris"}}, "not an offered tool"),
    ({"name": "set_timer", "arguments": {"minutes": 10}}, "no requested call"),
    ({"name": "get_weather", "arguments": {}}, "required"),
    ({"name": "get_weather", "arguments": {"city": "Paris", "country": "FR"}}, "Additional properties"),
    ({"name": "get_weather", "arguments": {"city": 75}}, "not of type 'string'"),
    ({"name": "get_weather", "arguments": {"city": "Paris", "unit": "kelvin"}}, "is not one of"),
    ({"name": "get_weather", "arguments": {"city": "Lyon"}}, "no requested call"),
    ({"name": "get_weather", "arguments": {"city": "Paris", "unit": "fahrenheit"}}, "no requested call"),
])
def test_wrong_calls_score_zero_with_a_reason(fmt, call, why):
    r = score(fmt([call]))
    assert r.score == 0.0 and r.components["exact"] == 0.0
    assert why in r.info["reason"]
    assert "Paris" not in r.info["reason"] or call["arguments"].get("city") == "Paris"  # gold never quoted


def test_types_are_strict_and_booleans_are_not_numbers(fmt):
    for minutes in ["10", True, 10.5, None]:
        assert score(fmt([{"name": "set_timer", "arguments": {"minutes": minutes}}]), [TIMER]).score == 0.0
    assert score(fmt([{"name": "set_timer", "arguments": {"minutes": 10.0}}]), [TIMER]).score == 1.0


def test_integers_compare_exactly_and_huge_ones_do_not_overflow(fmt):
    for minutes in [10**400, 10.000000000001, 10 + 1e-9]:
        r = score(fmt([{"name": "set_timer", "arguments": {"minutes": minutes}}]), [TIMER])
        assert r.score == 0.0 and "reward_error" not in r.info, (minutes, r.info)
    gold = {"name": "set_timer", "arguments": {"minutes": 10**400}}
    assert score(fmt([{"name": "set_timer", "arguments": {"minutes": 10**400}}]), [gold]).score == 1.0
    assert score(fmt([{"name": "set_timer", "arguments": {"minutes": 1e400}}]), [gold]).score == 0.0


def test_optional_parameters_may_be_omitted_or_spelled_as_their_default(fmt):
    gold_with_default = {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
    assert score(fmt([gold_with_default])).score == 1.0  # default spelled out, gold omits it
    assert score(fmt([WEATHER]), [gold_with_default]).score == 1.0  # omitted, gold spells the default
    lights = {"name": "turn_on_lights", "arguments": {"room": "kitchen", "brightness": 40}}
    assert score(fmt([{"name": "turn_on_lights", "arguments": {"room": "kitchen"}}]), [lights]).score == 0.0


def test_loose_only_where_spelling_is_not_the_point(fmt):
    food = {"name": "order_food", "arguments": {"restaurant": "Luigi's", "items": ["pad thai", "miso soup"]}}
    same = {"name": "order_food", "arguments": {"restaurant": " luigi's. ", "items": ["Miso  Soup", "the pad thai"]}}
    assert score(fmt([same]), [food]).score == 1.0
    fewer = {"name": "order_food", "arguments": {"restaurant": "Luigi's", "items": ["pad thai"]}}
    assert score(fmt([fewer]), [food]).score == 0.0


def test_malformed_json_and_missing_calls(formats):
    r = score('<tool_call>{"name": "get_weather", "arguments": {city: Paris}}</tool_call>')
    assert r.score == 0.0 and "invalid JSON" in r.info["reason"]
    bad_args = {"role": "assistant", "content": None,
                "tool_calls": [{"id": "a", "function": {"name": "get_weather", "arguments": "{city"}}]}
    assert score(bad_args).score == 0.0 and "not valid JSON" in score(bad_args).info["reason"]
    for text in ["", "The weather in Paris is sunny.", "<tool_call>", "<tool_call></tool_call>"]:
        r = score(text)
        assert r.score == 0.0 and r.info["reason"]
    assert score("").info["reason"] == "no tool call"


def test_parallel_calls_match_in_any_order(formats):
    lima = {"name": "get_weather", "arguments": {"city": "Lima"}}
    gold = [WEATHER, lima, TIMER]
    for encode in formats.values():
        for order in ([WEATHER, lima, TIMER], [TIMER, lima, WEATHER], [lima, TIMER, WEATHER]):
            assert score(encode(order), gold).score == 1.0
        assert score(encode([lima, TIMER]), gold).score == pytest.approx(2 / 3)
        assert score(encode([WEATHER, WEATHER, WEATHER]), gold).score == pytest.approx(1 / 3)


def test_a_call_spree_cannot_beat_the_exact_answer(fmt):
    spree = [WEATHER, TIMER, {"name": "get_weather", "arguments": {"city": "Lima"}}, WEATHER]
    r = score(fmt(spree))
    assert r.score == pytest.approx(1 / 4) and r.components["matched"] == 1.0 and r.components["exact"] == 0.0
    assert score(fmt(spree), partial_credit=False).score == 0.0
    assert score(fmt([WEATHER]), partial_credit=False).score == 1.0
