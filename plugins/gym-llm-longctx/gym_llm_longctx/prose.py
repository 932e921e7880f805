"""Seeded generators of text: haystack prose, needle keys, invented names.

Everything the long-context environments show is generated here, locally,
from a :class:`random.Random`; nothing is downloaded.

Guarantees the environments rely on (and the tests check):

* Haystack prose (:func:`sentences`) is drawn from a small English grammar
  whose vocabulary is :data:`PROSE_WORDS`. It contains **no digit** and no
  word of :data:`KEY_WORDS`, and every invented word (:func:`invented_word`,
  :func:`proper_name`) is outside :data:`PROSE_WORDS`; so a needle (a key
  phrase plus a number), a variable name or an invented entity can never
  occur in the filler by accident.
* The same ``Random`` state gives the same text in any process.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

__all__ = [
    "PROSE_WORDS", "KEY_WORDS", "sentences", "paragraph_units", "key_phrase",
    "invented_word", "proper_name", "variable_name",
]

_PEOPLE = (
    "the old ferryman", "a young shepherd", "the harbour master", "her grandmother",
    "the village baker", "a travelling tinker", "the schoolteacher", "the miller's daughter",
    "an elderly fisherman", "the blacksmith", "a quiet stranger", "the innkeeper",
    "the boy from the hill farm", "the weaver", "the parish clerk", "a retired sailor",
    "the widow next door", "the carpenter's apprentice", "the postman", "a tired traveller",
    "the potter", "the lighthouse keeper", "his younger brother", "the shopkeeper",
)
_TRANSITIVE = (
    "mended", "carried", "painted", "cleaned", "gathered", "counted", "borrowed", "polished",
    "repaired", "folded", "wrapped", "weighed", "sketched", "noticed", "admired", "examined",
    "hauled", "stacked", "found", "sold", "brought", "kept", "fetched", "opened",
)
_THINGS = (
    "the torn sail", "a basket of apples", "the rusty lantern", "an old map of the coast",
    "the wooden gate", "a bundle of letters", "the broken clock", "a jar of honey",
    "the fishing nets", "a loaf of dark bread", "the bell rope", "a stack of firewood",
    "the cracked teapot", "a sack of flour", "the heavy oak door", "a coil of rope",
    "the faded curtains", "a pair of boots", "the garden bench", "a box of candles",
    "the leaking bucket", "a crate of pears", "the little rowing boat", "a roll of linen",
)
_PLACES = (
    "near the old mill", "by the river", "at the edge of the forest", "in the market square",
    "behind the chapel", "along the harbour wall", "on the hill above the town",
    "under the stone bridge", "in the narrow lane", "beside the well", "outside the bakery",
    "at the end of the pier", "in the orchard", "by the lighthouse", "on the village green",
    "inside the empty barn", "near the crossroads", "down by the marsh",
)
_TIMES = (
    "in the early morning", "after the long winter", "that autumn", "before the storm arrived",
    "on market day", "late in the evening", "during the harvest", "when the tide turned",
    "some years later", "at first light", "on a grey afternoon", "the following spring",
    "just before supper", "in the middle of the night", "once the snow had melted",
)
_MANNER = (
    "slowly", "carefully", "quietly", "without a word", "with great patience", "in a hurry",
    "as usual", "more carefully than before", "with some reluctance", "cheerfully",
)
_INTRANSITIVE = (
    "walked", "waited", "rested", "sang", "worked", "wandered", "lingered", "listened",
    "paused", "laughed", "hesitated", "watched",
)
_CLAUSES = (
    "while the children played", "as the rain began to fall", "because the road was flooded",
    "although nobody had asked", "until the lamps were lit", "since the shops were closed",
    "while gulls circled overhead", "as the bells rang", "because the cart had lost a wheel",
    "while the kettle boiled", "as the fog rolled in from the sea", "though the wind was cold",
)
_SCENES = (
    "the market square", "the harbour", "the old mill", "the kitchen", "the chapel",
    "the schoolhouse", "the orchard", "the narrow lane", "the village green", "the inn",
)
_ADJECTIVES = (
    "quiet", "crowded", "cold", "bright", "damp", "peaceful", "noisy", "dusty", "warm",
    "empty", "busy", "gloomy", "still",
)
_NATURE = (
    "The wind came down from the hills", "A thin mist hung over the fields",
    "The river rose a little", "Rain drummed on the slate roofs", "The sun broke through the clouds",
    "A flock of starlings settled on the roofs", "Frost covered the hedges",
    "The smell of wood smoke drifted through the streets", "Thunder rumbled far away",
    "The tide crept over the mudflats",
)
_FEELINGS = (
    "felt oddly content", "seemed lost in thought", "grew impatient", "was glad of the company",
    "could not stop smiling", "looked more tired than usual", "said very little",
    "remembered an old song", "wondered about the weather",
)
_CONNECTORS = ("Meanwhile", "Later", "Even so", "Afterwards", "By then", "As it happened", "Still")

_TEMPLATES = (
    "{Time}, {person} {transitive} {thing} {place}.",
    "{Person} {intransitive} {manner} {place} {clause}.",
    "{Scene} was {adj} and {adj2} {time}.",
    "{Nature} {time} {clause}.",
    "{Connector}, {person} {feeling} {place}.",
    "Nobody could remember who had first {transitive} {thing} {place}.",
    "{Person} said that {person2} had {transitive} {thing} {place}.",
    "It was {person} who {transitive} {thing} {time}.",
    "{Time}, {person} {feeling} {clause}.",
    "{Time}, {nature_lower} and {person} {intransitive} {place}.",
    "People said that {scene} was never {adj} {time}.",
    "{Person} {transitive} {thing} and then {intransitive} {manner}.",
)


def _words_of(*groups: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w for g in groups for phrase in g for w in re.findall(r"[a-z]+", phrase.lower()))


#: Every word the haystack grammar can produce (lower-cased).
PROSE_WORDS: frozenset[str] = _words_of(
    _PEOPLE, _TRANSITIVE, _THINGS, _PLACES, _TIMES, _MANNER, _INTRANSITIVE, _CLAUSES, _SCENES,
    _ADJECTIVES, _NATURE, _FEELINGS, _CONNECTORS, _TEMPLATES,
)

_KEY_ADJ = (
    "cobalt", "velvet", "quartz", "saffron", "obsidian", "crimson", "ivory", "jade", "scarlet",
    "amber", "indigo", "copper", "silver", "golden", "violet", "emerald", "turquoise", "ochre",
    "magenta", "cerulean", "bronze", "onyx", "topaz", "ruby", "sapphire", "pearl", "coral",
    "lilac", "teal", "maroon", "olive", "charcoal", "azure", "plum", "mint", "russet",
)
_KEY_NOUN = (
    "falcon", "walrus", "tractor", "pelican", "compass", "glacier", "violin", "cactus", "rocket",
    "badger", "trumpet", "meadowlark", "turbine", "lobster", "kayak", "penguin", "telescope",
    "harpoon", "marmot", "zeppelin", "gecko", "trombone", "iceberg", "octopus", "scooter",
    "antelope", "hammock", "tornado", "beetle", "sextant", "jaguar", "canyon", "piano",
    "raccoon", "volcano", "bicycle",
)
#: Words of needle keys: none of them is a prose word.
KEY_WORDS: frozenset[str] = frozenset(_KEY_ADJ + _KEY_NOUN)
_PROSE_SLOTS: dict[str, tuple[str, ...]] = {
    "person": _PEOPLE, "transitive": _TRANSITIVE, "thing": _THINGS, "place": _PLACES,
    "time": _TIMES, "manner": _MANNER, "intransitive": _INTRANSITIVE, "clause": _CLAUSES,
    "scene": _SCENES, "adj": _ADJECTIVES, "feeling": _FEELINGS, "connector": _CONNECTORS,
    "nature": _NATURE,
}


# Parsing the templates once keeps generation to a few random draws per sentence.
_COMPILED = tuple((t, tuple(re.findall(r"\{(\w+)\}", t))) for t in _TEMPLATES)


def sentences(rng: random.Random) -> Iterator[str]:
    """An endless stream of haystack sentences drawn from the grammar.

    In a template, ``{Slot}`` is capitalised, ``{slot2}`` is a second
    independent draw of ``slot`` and ``{nature_lower}`` lower-cases its phrase.
    """
    choice = rng.choice
    while True:
        template, slots = choice(_COMPILED)
        values = {}
        for slot in slots:
            base = slot.rstrip("2").removesuffix("_lower").lower()
            phrase = choice(_PROSE_SLOTS[base])
            if slot.endswith("_lower"):
                phrase = phrase[0].lower() + phrase[1:]
            elif slot[0].isupper():
                phrase = phrase[0].upper() + phrase[1:]
            values[slot] = phrase
        yield template.format_map(values)


def paragraph_units(rng: random.Random) -> Iterator[str]:
    """Haystack sentences each with the separator that precedes it:
    ``"\n\n"`` to start a paragraph (every 3-6 sentences), ``" "`` otherwise
    (the first unit too). Joining units and stripping the leading space gives
    the haystack, so a prefix of units is a prefix of the text."""
    left = rng.randint(3, 6)
    for s in sentences(rng):
        if left == 0:
            left = rng.randint(3, 6)
            yield "\n\n" + s
        else:
            yield " " + s
        left -= 1


def key_phrase(rng: random.Random) -> str:
    """A needle key such as ``"cobalt-falcon"`` (only :data:`KEY_WORDS`)."""
    return f"{rng.choice(_KEY_ADJ)}-{rng.choice(_KEY_NOUN)}"


_ONSETS = ("b", "br", "d", "dr", "f", "g", "gr", "k", "kl", "l", "m", "n", "p", "pr", "r",
           "s", "st", "t", "tr", "v", "z", "sh", "th")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou", "ei")
_CODAS = ("", "n", "r", "l", "m", "s", "k", "nd", "st")


def invented_word(rng: random.Random, syllables: int = 2) -> str:
    """A pronounceable lower-case non-word such as ``"brelotan"``: open
    syllables and one final consonant cluster; never one of
    :data:`PROSE_WORDS` or :data:`KEY_WORDS`."""
    choice = rng.choice
    while True:
        word = "".join(choice(_ONSETS) + choice(_VOWELS) for _ in range(syllables)) + choice(_CODAS)
        if word not in PROSE_WORDS and word not in KEY_WORDS:
            return word


def proper_name(rng: random.Random, syllables: int = 2) -> str:
    """A capitalised invented name such as ``"Drailon"``."""
    return invented_word(rng, syllables).capitalize()


_CONSONANTS = "BCDFGHJKLMNPQRSTVXZ"


def variable_name(rng: random.Random) -> str:
    """Five upper-case consonants (``"QXBRT"``): never an English word, never
    in the prose (which has no all-capital words)."""
    return "".join(rng.choice(_CONSONANTS) for _ in range(5))
