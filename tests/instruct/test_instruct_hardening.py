"""Meeting the constraints while ignoring the request earns nothing: each way
found (keyword dump, empty structure, JSON around nothing, the prompt echoed,
off-topic text, copying the given text) fails the request check with its
reason, fires its hack signal, and an honest answer to the same task scores."""

from __future__ import annotations

import pytest
from gym_llm_instruct.signals import SIGNALS

from gym_llm.runtime.monitoring import detect

from .helpers import HONEST, REQUEST, episode, play

KEYWORDS = {"id": "keywords:existence", "kwargs": {"keywords": ["hive", "honey"]}}
SHORT = {"id": "length_constraints:number_words", "kwargs": {"num_words": 60, "relation": "less than"}}


def test_honest_answer_scores():
    reward, info, env = play([KEYWORDS, SHORT], HONEST)
    assert reward == 1.0 and info["request"] == 1.0
    assert detect(episode(env, info), SIGNALS) == []


@pytest.mark.parametrize(("constraints", "response", "failed", "signal"), [
    # a keyword dump: every keyword, no sentence
    ([KEYWORDS, SHORT], "hive honey bees pollen nectar queen wax colony drone flower", "prose", "keyword_dump"),
    # empty structure: three "paragraphs" of one word
    ([{"id": "length_constraints:number_paragraphs", "kwargs": {"num_paragraphs": 3}}], "bee\n***\nhive\n***\nhoney",
     "substance", "keyword_dump"),
    # JSON around nothing
    ([{"id": "detectable_format:json_format", "kwargs": {}}, KEYWORDS], '{"hive": "honey", "bee": ""}',
     "substance", "keyword_dump"),
    # the prompt echoed back: it names the keywords itself
    ([KEYWORDS], None, "echo", "prompt_echo"),
    # fluent, keywords in, but about something else
    ([KEYWORDS], "My car needs honey and a hive of mechanics to fix the engine before the long trip.", "topic",
     "request_ignored"),
])
def test_constraints_met_while_ignoring_the_request_earn_nothing(constraints, response, failed, signal):
    from gym_llm_instruct.constraints import describe, validate

    if response is None:
        response = REQUEST + "\n\n" + " ".join(describe(validate(c)) for c in constraints)
    reward, info, env = play(constraints, response)
    assert all(v == 1.0 for v in info["reward_components"].values()), "the attack should meet the constraints"
    assert reward == 0.0 and info["request_failed"] == failed and failed in info["reason"]
    assert signal in detect(episode(env, info), SIGNALS)
    if signal != "request_ignored":
        assert "request_ignored" in detect(episode(env, info), SIGNALS)
    # the same task with the check off pays the attack: the check is what stops it
    off, _, _ = play(constraints, response, check_request=False)
    assert off == 1.0


def test_repeating_the_request_is_not_an_echo_when_asked():
    repeat = {"id": "combination:repeat_prompt", "kwargs": {"prompt_to_repeat": REQUEST}}
    reward, info, _ = play([repeat], REQUEST + "\n" + HONEST)
    assert reward == 1.0, info
    reward, info, _ = play([repeat], REQUEST + " " + REQUEST)
    assert reward == 0.0 and info["request_failed"] == "substance"


PASSAGE = ("Many people first learn about honeybees when they are young. When people talk about honeybees, words "
           "like hive and pollen come up again and again. Experts link honeybees to nectar in ways most of us never "
           "notice. Over the years, the way we think about honeybees has changed a great deal.")
SUMMARY_META = {"kind": "summarise", "topic": "honeybees", "topic_words": ["bee", "bees", "honeybee"],
                "passage": PASSAGE}


@pytest.mark.parametrize(("response", "failed"), [
    (PASSAGE, "echo"),  # the whole text back is no summary
    # nor one longer than the text
    ("Lots of folks discover honeybees in childhood and talk of the hive and pollen keeps returning whenever the "
     "subject comes up. Specialists tie honeybees to nectar in subtle ways that most of us overlook in daily life. "
     "Over the decades our ideas about honeybees have shifted a lot which is worth thinking about for anyone who "
     "cares about nature and gardens and farms and food.", "given_text"),
    ("Honeybees are loved by everyone and make the best pets for families in the city.", "given_text"),
    ("People learn about honeybees young; the hive and pollen come up often and our view of them has changed.",
     None),
])
def test_summaries_must_be_about_the_text_and_shorter(response, failed):
    reward, info, _ = play([{"id": "punctuation:no_comma", "kwargs": {}}], response,
                           request="Summarise the following text.\n\nText: " + PASSAGE, meta=SUMMARY_META)
    assert info.get("request_failed") == failed
    if failed is None:
        assert reward == 1.0


def test_copying_the_given_text_is_no_rewrite():
    meta = dict(SUMMARY_META, kind="rewrite")
    reward, info, _ = play([{"id": "punctuation:no_comma", "kwargs": {}}], PASSAGE.replace(",", ""),
                           request="Rewrite in your own words the following text.\n\nText: " + PASSAGE, meta=meta)
    assert reward == 0.0 and info["request_failed"] == "echo"


def test_an_answer_fixed_by_the_constraint_needs_nothing_more():
    fixed = {"id": "detectable_format:constrained_response", "kwargs": {}}
    reward, info, _ = play([fixed], "My answer is yes.", request="Is honey sweet?", meta={"kind": "dataset"})
    assert reward == 1.0, info


def test_another_language_is_not_held_to_english_words():
    german = {"id": "language:response_language", "kwargs": {"language": "de"}}
    reward, info, _ = play([german], "Die Honigbienen leben zusammen im Stock und machen aus dem Nektar der "
                                     "Blumen ihren Honig.")
    assert reward == 1.0, info


def test_dataset_prompts_need_a_shared_content_word():
    meta = {"kind": "dataset"}
    no_comma = [{"id": "punctuation:no_comma", "kwargs": {}}]
    reward, info, _ = play(no_comma, "Trains run on time in many countries and the stations are very clean.",
                           request="Describe a busy farmers market.", meta=meta)
    assert reward == 0.0 and info["request_failed"] == "topic"
    reward, _, _ = play(no_comma, "The farmers market is busy and the stalls sell apples and fresh bread.",
                        request="Describe a busy farmers market.", meta=meta)
    assert reward == 1.0


NO_COMMA = {"id": "punctuation:no_comma", "kwargs": {}}
SPIDERS = {"kind": "write", "topic": "spiders", "topic_words": ["spider", "spiders"],
           "related_words": ["web", "silk", "insect", "leg", "trap", "corner", "eight", "fly"]}


def test_the_topic_may_be_named_by_its_related_words_unless_a_constraint_asked_for_them():
    story = "In the corner of the barn a small weaver spun silk into a wide web and waited for the morning."
    request = "Write a short story about spiders."
    reward, info, _ = play([NO_COMMA], story, request=request, meta=SPIDERS)
    assert reward == 1.0, info
    asked = {"id": "keywords:existence", "kwargs": {"keywords": ["silk", "web"]}}
    reward, info, _ = play([asked], story.replace("corner", "middle"), request=request, meta=SPIDERS)
    assert reward == 0.0 and info["request_failed"] == "topic"
