"""Filler prose: sentences that state no fact, per kind of section.

``{n}`` is the subject's display name. None of these contains markup, names
another entity, or a number, so they can never contradict a fact.
"""

from __future__ import annotations

FILLER: dict[str, tuple[str, ...]] = {
    "early": (
        "{n} grew up in a large household.",
        "As a child, {n} showed an early interest in books and maps.",
        "Little is recorded about the family of {n}.",
        "{n} spent several summers in the countryside.",
        "The young {n} was described by teachers as quiet but stubborn.",
    ),
    "career": (
        "Contemporaries described {n} as meticulous and demanding.",
        "{n} travelled widely during these years.",
        "The period was one of steady, if modest, success.",
        "Several projects from this time were never completed.",
        "{n} often worked late into the night.",
        "Colleagues later recalled the energy {n} brought to every task.",
    ),
    "personal": (
        "{n} rarely spoke about private matters in public.",
        "Friends remembered {n} as generous and good-humoured.",
        "{n} kept a diary for most of adult life.",
    ),
    "legacy": (
        "The influence of {n} is still debated by historians.",
        "A number of later figures cited {n} as an inspiration.",
        "Interest in {n} revived in the following decades.",
        "Several streets are named after {n}.",
    ),
    "place_history": (
        "The settlement grew around a market and a river crossing.",
        "Much of the old town was rebuilt after a great fire.",
        "Trade brought steady growth during the following centuries.",
        "The town walls were demolished to make room for new streets.",
    ),
    "place_geo": (
        "The surrounding land is mostly farmland and low hills.",
        "Winters are cold and summers are mild.",
        "Several small lakes lie nearby.",
        "The area is known for its orchards.",
    ),
    "place_people": (
        "The population has grown steadily over the last century.",
        "Many residents work in trade and services.",
        "A significant share of the population lives in the old town.",
    ),
    "country": (
        "The country has a varied landscape of plains, forests and mountains.",
        "Agriculture remains an important part of the economy.",
        "The country is divided into several provinces.",
        "Tourism has grown in recent decades.",
    ),
    "org": (
        "{n} expanded steadily over the following decades.",
        "The organisation went through several reorganisations.",
        "{n} has been the subject of several histories.",
        "Its early years were marked by financial difficulties.",
    ),
    "work": (
        "Critics praised its structure and its characters.",
        "The work received mixed reviews on its release.",
        "It has been reissued several times.",
        "Later critics have been kinder than the first reviewers.",
        "It sold poorly at first but later found a wide audience.",
    ),
    "event": (
        "Accounts of the event differ in many details.",
        "Historians have long debated its significance.",
        "The event is commemorated by a small monument.",
        "Contemporary reports were brief.",
    ),
    "nature": (
        "The area is home to a wide variety of birds.",
        "Parts of it are protected as a nature reserve.",
        "Its landscape has been painted by many artists.",
        "The surrounding region is sparsely populated.",
    ),
    "award": (
        "The award is considered one of the most prestigious in its field.",
        "Winners are chosen by an independent jury.",
        "The ceremony is held every year.",
    ),
    "language": (
        "The language has a rich oral tradition.",
        "Several dialects are spoken in rural areas.",
        "A standard written form was agreed upon in the last century.",
    ),
}
