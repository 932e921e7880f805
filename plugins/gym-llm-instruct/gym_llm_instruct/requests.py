"""Base requests (what the constraints are attached to) and the check that a
response did what the request asked.

A generated request is one of five kinds (``write``, ``explain``, ``list``,
``summarise``, ``rewrite`` a given text) about one of :data:`TOPICS`; the given
text of ``summarise``/``rewrite`` is composed from the topic's words. A task's
``metadata["request"]`` records what :func:`check_request` needs: the kind, the
topic's words and the given text.

:func:`check_request` is the hardening: meeting the constraints while ignoring
the request (a keyword dump, empty paragraphs, JSON around nothing, the prompt
echoed back) earns nothing. What the request demands (docs/instruct.md, "What
the request demands"), in order:

1. ``substance``: at least :data:`MIN_OWN_WORDS` distinct words of 2+ letters
   that are not words of the constraints' own arguments (keywords, phrases);
2. ``prose``: at least :data:`MIN_FUNCTION_WORDS` distinct English function
   words (the, of, is, ...), so a list of keywords is not an answer; waived when
   a constraint rules out ordinary prose, or asks for another language;
3. ``echo``: at most :data:`MAX_ECHO` of the response's word 6-grams come from
   the prompt (after the repeated request that ``combination:repeat_prompt``
   asks for);
4. ``topic``: a generated request's topic word appears, or two of its related
   words that no constraint asked for (waived for another language); a dataset
   prompt's: one of its content words appears (1, 2 and 4 are waived when a
   constraint fixes the answer to one of a few options, :data:`ANSWER_FIXED`);
5. ``given text``: ``summarise``/``rewrite`` share at least 3 content words
   with the given text; a summary has fewer words than the text.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .constraints import CONSTRAINTS

__all__ = ["TOPICS", "Topic", "KINDS", "make_request", "check_request", "RequestCheck", "MIN_OWN_WORDS",
           "MIN_FUNCTION_WORDS", "MAX_ECHO", "ANSWER_FIXED", "FUNCTION_WORDS", "content_words"]

MIN_OWN_WORDS = 8
MIN_FUNCTION_WORDS = 2
MAX_ECHO = 0.6
_NGRAM = 6


@dataclass(frozen=True)
class Topic:
    """A subject: ``name`` as the request says it, ``words`` that show a
    response is about it (any one, as a word prefix), ``related`` words that
    keyword constraints ask for."""

    name: str
    words: tuple[str, ...]
    related: tuple[str, ...]


def _t(name: str, words: str, related: str) -> Topic:
    return Topic(name, tuple(words.split()), tuple(related.split()))


TOPICS: tuple[Topic, ...] = (
    _t("honeybees", "bee bees honeybee", "hive honey pollen flower queen colony nectar wax"),
    _t("the moon", "moon lunar", "orbit tide crater night light phase earth sky"),
    _t("bicycles", "bicycle bike cycling", "wheel pedal chain ride road helmet speed brake"),
    _t("rainforests", "rainforest forest jungle", "tree rain canopy species river animal green leaf"),
    _t("volcanoes", "volcano volcanic lava", "magma eruption ash mountain rock heat crater island"),
    _t("coffee", "coffee", "bean cup morning roast milk aroma caffeine brew"),
    _t("public libraries", "library libraries", "book reader shelf quiet card study borrow story"),
    _t("the ocean", "ocean sea marine", "wave water fish salt coral tide deep blue"),
    _t("trains", "train railway rail", "station track ticket journey engine carriage speed travel"),
    _t("gardening", "garden gardening", "soil seed plant water flower spring tomato grow"),
    _t("chess", "chess", "board king queen pawn move game strategy knight"),
    _t("recycling", "recycle recycling", "plastic paper bottle waste bin glass metal reuse"),
    _t("the human heart", "heart cardiac", "blood beat pulse muscle body health oxygen vessel"),
    _t("bread baking", "bread baking bake", "flour dough oven yeast crust loaf butter kitchen"),
    _t("solar power", "solar sun", "panel energy light electricity roof power battery clean"),
    _t("owls", "owl owls", "night feather hunt wing forest eye mouse nest"),
    _t("marathon running", "marathon running runner run", "race mile training shoe finish water pace legs"),
    _t("ancient Egypt", "egypt egyptian", "pyramid pharaoh nile tomb desert river king stone"),
    _t("snow", "snow snowy", "winter cold flake white ice mountain sled frost"),
    _t("the piano", "piano", "key music note song play chord teacher sound"),
    _t("city parks", "park parks", "tree bench path grass city children walk dog"),
    _t("tea", "tea", "leaf cup water green kettle herbal morning warm"),
    _t("robots", "robot robots robotic", "machine sensor arm factory program motor task metal"),
    _t("lighthouses", "lighthouse lighthouses", "light coast ship sea tower night keeper rock"),
    _t("dinosaurs", "dinosaur dinosaurs", "fossil bone extinct reptile tooth giant museum egg"),
    _t("camping", "camp camping", "tent fire forest night sleep trail lake stars"),
    _t("elephants", "elephant elephants", "trunk herd tusk africa memory grass water calf"),
    _t("the internet", "internet online", "network computer website email data search connection browser"),
    _t("kites", "kite kites", "wind string sky fly beach paper color tail"),
    _t("bridges", "bridge bridges", "river steel arch cross road engineer cable stone"),
    _t("penguins", "penguin penguins", "ice swim cold fish egg colony antarctica wing"),
    _t("vaccines", "vaccine vaccines vaccination", "disease immune doctor health virus protection child dose"),
    _t("clocks", "clock clocks", "time hour minute hand tick alarm wall second"),
    _t("deserts", "desert deserts", "sand dry heat cactus camel dune night water"),
    _t("the violin", "violin", "string bow music orchestra note wood sound concert"),
    _t("photography", "photograph photography photo camera", "light lens picture image color shot frame"),
    _t("rivers", "river rivers", "water flow fish bank bridge valley boat stream"),
    _t("board games", "board game games", "dice player card rule turn family fun table"),
    _t("apples", "apple apples", "tree fruit orchard red juice pie seed autumn"),
    _t("submarines", "submarine submarines", "ocean deep water crew dive periscope engine pressure"),
    _t("mountains", "mountain mountains", "peak snow climb rock valley trail summit air"),
    _t("spiders", "spider spiders", "web silk insect leg trap corner eight fly"),
    _t("the printing press", "printing press printer", "book paper ink page word history letter copy"),
    _t("wind turbines", "wind turbine turbines", "energy blade power electricity tower clean air farm"),
    _t("museums", "museum museums", "art history visitor exhibit painting ticket guide room"),
    _t("sleep", "sleep sleeping", "night bed dream rest brain body tired hour"),
    _t("glaciers", "glacier glaciers", "ice mountain melt water valley climate snow slow"),
    _t("football", "football soccer", "ball goal team player field match coach score"),
    _t("chocolate", "chocolate cocoa", "sweet bar milk bean sugar dessert taste dark"),
    _t("airports", "airport airports", "plane flight gate ticket luggage travel runway passenger"),
    _t("whales", "whale whales", "ocean song water swim calf blue giant krill"),
    _t("the postal service", "postal mail post", "letter stamp parcel address delivery office envelope card"),
    _t("fireflies", "firefly fireflies", "light night summer insect glow field warm evening"),
    _t("windmills", "windmill windmills", "wind grain sail mill flour farm tower history"),
    _t("origami", "origami", "paper fold crane shape square art japan hands"),
    _t("rain", "rain rainy rainfall", "cloud water storm umbrella drop puddle weather wet"),
    _t("hospitals", "hospital hospitals", "doctor nurse patient care room health medicine emergency"),
    _t("cheese", "cheese", "milk cow goat taste farm aged bread slice"),
    _t("astronauts", "astronaut astronauts", "space rocket moon station orbit training suit earth"),
    _t("bamboo", "bamboo", "plant grow panda stem green forest tall wood"),
)

KINDS = ("write", "explain", "list", "summarise", "rewrite")

_WRITE_FORMS = ("a short paragraph", "a short story", "a short poem", "a blog post", "a letter to a friend",
                "a short speech", "a diary entry")
_EXPLAIN_AUDIENCES = ("a child", "a new student", "a curious friend", "a tourist", "someone who has never heard "
                      "of it", "an older neighbour")
_EXPLAIN_ANGLES = ("why people care about {t}", "the role of {t} in everyday life",
                   "what is interesting about {t}", "what people often get wrong about {t}")
_LIST_THINGS = ("facts", "tips", "ideas", "reasons to care", "questions people ask")

#: Sentences a given text is composed of ({t}: topic, {a}/{b}/{c}: related words).
_PASSAGE = (
    "Many people first learn about {t} when they are young.",
    "When people talk about {t}, words like {a} and {b} come up again and again.",
    "Experts link {t} to {c} in ways most of us never notice.",
    "A small town once held a festival for {t}, and visitors came to see the {a}.",
    "Some writers describe {t} as calm, while others think of {b} and noise.",
    "Over the years, the way we think about {t} has changed a great deal.",
    "Teachers often use {t} to explain bigger ideas such as change and balance.",
    "In many places, people meet {t} in daily life, from the {a} to the {c}.",
    "Nobody agrees on the best way to describe {t}, but most people find the subject worth a closer look.",
    "A recent report found that interest in {t} has grown, especially among families.",
)

#: English function words (articles, prepositions, pronouns, auxiliaries,
#: conjunctions): real sentences hold several, a list of keywords none.
_FUNCTION_WORDS = (
    "an the of to in on at by for with from about as into over under after before between through during "
    "and or but so yet nor because if when while although than that which who whom whose what where why how "
    "is are was were be been being am do does did have has had can could will would shall should may might "
    "must it its this these those there here they them their we us our you your he him his she her i me my "
    "not no also very more most some any all each every many much such only just")
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())

_WORD = re.compile(r"[^\W\d_]{2,}")

#: Constraints that fix the answer to one of a few options: the request then
#: demands only that option (no substance, prose or topic word).
ANSWER_FIXED = frozenset({"detectable_format:constrained_response", "format:options"})
_CONTENT_MIN_LEN = 4


def content_words(text: str) -> set[str]:
    """Lowercase words of 4+ letters that are not function words."""
    return {w for w in _WORD.findall(text.lower()) if len(w) >= _CONTENT_MIN_LEN and w not in FUNCTION_WORDS}


def make_request(rng: random.Random, topics: Sequence[Topic] = TOPICS) -> tuple[str, dict[str, Any], Topic]:
    """A random base request about one of ``topics``: ``(text, metadata["request"], topic)``."""
    topic = rng.choice(topics)
    kind = rng.choice(KINDS)
    meta: dict[str, Any] = {"kind": kind, "topic": topic.name, "topic_words": list(topic.words),
                            "related_words": list(topic.related)}
    if kind == "write":
        text = f"Write {rng.choice(_WRITE_FORMS)} about {topic.name}."
    elif kind == "explain":
        angle = rng.choice(_EXPLAIN_ANGLES).format(t=topic.name)
        text = f"Explain {angle}, for {rng.choice(_EXPLAIN_AUDIENCES)}."
    elif kind == "list":
        text = f"List some {rng.choice(_LIST_THINGS)} about {topic.name}."
    else:
        a, b, c = rng.sample(topic.related, 3)
        passage = " ".join(s.format(t=topic.name, a=a, b=b, c=c) for s in rng.sample(_PASSAGE, rng.randint(3, 5)))
        verb = "Summarise" if kind == "summarise" else "Rewrite in your own words"
        text = f"{verb} the following text.\n\nText: {passage}"
        meta["passage"] = passage
    return text, meta, topic


@dataclass(frozen=True)
class RequestCheck:
    """The outcome of :func:`check_request`: ``ok``, and when not, ``failed``
    (which demand: ``substance``, ``prose``, ``topic``, ``given_text``,
    ``echo``) and ``reason`` (a sentence)."""

    ok: bool
    failed: str = ""
    reason: str = ""


def _ngrams(words: Sequence[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + _NGRAM]) for i in range(len(words) - _NGRAM + 1)}


def _argument_words(constraints: Sequence[Mapping[str, Any]]) -> set[str]:
    """Words of the constraints' own arguments (keywords, end phrases, ...)."""
    out: set[str] = set()
    for c in constraints:
        for name, value in c["kwargs"].items():
            if name == "prompt_to_repeat":
                continue
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str):
                    out |= set(_WORD.findall(item.lower()))
    return out


def check_request(response: str, prompt: str, request: Mapping[str, Any],
                  constraints: Sequence[Mapping[str, Any]]) -> RequestCheck:
    """Whether ``response`` does what the base ``request`` (a task's
    ``metadata["request"]``) asks, beyond its constraints; see the module doc.
    ``prompt`` is the user prompt as shown (for the echo check)."""
    ids = {c["id"] for c in constraints}
    fixed = bool(ids & ANSWER_FIXED)
    language = next((c["kwargs"]["language"] for c in constraints if c["id"] == "language:response_language"), "en")
    english = language == "en"
    lower = response.lower()
    words = _WORD.findall(lower)
    argument_words = _argument_words(constraints)
    own = set(words) - argument_words
    if not fixed and len(own) < MIN_OWN_WORDS:
        return RequestCheck(False, "substance", f"the response has {len(own)} distinct words of its own; the request "
                                                f"asks for an answer (at least {MIN_OWN_WORDS})")
    prose = english and not fixed and all(CONSTRAINTS[i].prose for i in ids)
    if prose and len(own & FUNCTION_WORDS) < MIN_FUNCTION_WORDS:
        return RequestCheck(False, "prose", "the response is not written as sentences (a list of keywords?)")
    answer = lower
    for c in constraints:
        if c["id"] == "combination:repeat_prompt":
            repeated = c["kwargs"]["prompt_to_repeat"].strip().lower()
            stripped = answer.strip()
            answer = stripped[len(repeated):] if stripped.startswith(repeated) else answer
    grams = _ngrams(_WORD.findall(answer))
    if grams:
        echoed = len(grams & _ngrams(_WORD.findall(prompt.lower()))) / len(grams)
        if echoed > MAX_ECHO:
            return RequestCheck(False, "echo", f"{echoed:.0%} of the response is copied from the prompt")
    elif not fixed and not (set(_WORD.findall(answer)) - set(_WORD.findall(prompt.lower()))):
        return RequestCheck(False, "echo", "the response only repeats the prompt")
    if english and not fixed:
        if request.get("topic_words"):
            related = {w for w in request.get("related_words", ()) if w not in argument_words
                       and re.search(r"\b" + re.escape(w), lower)}
            if not any(re.search(r"\b" + re.escape(w), lower) for w in request["topic_words"]) and len(related) < 2:
                return RequestCheck(False, "topic", f"the response never mentions the topic ({request['topic']})")
        elif not content_words(response) & content_words(prompt):
            return RequestCheck(False, "topic", "the response shares no content word with the prompt")
    passage = request.get("passage")
    if passage:
        shared = len(content_words(response) & content_words(passage))
        if english and shared < 3:
            return RequestCheck(False, "given_text", f"the response shares {shared} content words with the given "
                                                     "text; it must be about that text (at least 3)")
        if request.get("kind") == "summarise" and len(words) >= len(_WORD.findall(passage.lower())):
            return RequestCheck(False, "given_text", "the summary is not shorter than the text")
    return RequestCheck(True)
