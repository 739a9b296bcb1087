"""Seeded syllable grammars for the names of the fictional world.

Every name is built from onset/vowel/coda syllables, so none is taken from a real
list; a small blocklist of real country and city names rejects accidental hits
(short grammars do produce "Lima" or "Oslo" now and then).
"""

from __future__ import annotations

import random

_ONSETS = (
    "b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
    "br", "dr", "gr", "kr", "tr", "st", "th", "sk", "vr", "sh", "l", "m", "n", "r", "t", "v",
)  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "a", "ae", "ei", "ou", "y")
_CODAS = ("", "", "", "", "n", "r", "l", "s", "th", "m", "k", "nd", "rn", "sk", "v")

_PLACE_ENDINGS = (
    "mora", "vik", "dal", "heim", "oria", "ennes", "ath", "ova", "esse", "ara", "holt", "un",
    "ir", "ane", "osk", "ela", "amar", "indor",
)  # fmt: skip
_GIVEN_F_ENDINGS = ("a", "ia", "ine", "elle", "ara", "eth", "is", "ea")
_GIVEN_M_ENDINGS = ("en", "or", "as", "ik", "an", "eth", "ul", "os")
_SURNAME_ENDINGS = ("ali", "ovan", "essi", "ander", "ik", "orn", "ema", "avel", "usk", "arin", "")
_COUNTRY_ENDINGS = ("ia", "ia", "ia", "land", "enne", "ar", "avia", "estan", "orra", "una")

# Real country and city names a short syllable grammar can hit by chance (lower case).
BLOCKLIST: frozenset[str] = frozenset(
    """
    afghanistan albania algeria andorra angola argentina armenia australia austria azerbaijan
    bahamas bahrain bangladesh barbados belarus belgium belize benin bhutan bolivia bosnia
    botswana brazil brunei bulgaria burundi cambodia cameroon canada chad chile china colombia
    comoros congo croatia cuba cyprus czechia denmark djibouti dominica ecuador egypt eritrea
    estonia eswatini ethiopia fiji finland france gabon gambia georgia germany ghana greece
    grenada guatemala guinea guyana haiti honduras hungary iceland india indonesia iran iraq
    ireland israel italy jamaica japan jordan kazakhstan kenya kiribati kosovo kuwait laos
    latvia lebanon lesotho liberia libya lithuania luxembourg madagascar malawi malaysia
    maldives mali malta mauritania mauritius mexico moldova monaco mongolia montenegro morocco
    mozambique myanmar namibia nauru nepal netherlands nicaragua niger nigeria norway oman
    pakistan palau panama paraguay peru philippines poland portugal qatar romania russia rwanda
    samoa senegal serbia seychelles singapore slovakia slovenia somalia spain sudan suriname
    sweden switzerland syria taiwan tajikistan tanzania thailand togo tonga tunisia turkey
    tuvalu uganda ukraine uruguay uzbekistan vanuatu venezuela vietnam yemen zambia zimbabwe
    scotland wales england britain persia prussia bohemia moravia serbia dacia gaul iberia
    lydia media nubia numidia sardinia sicily corsica crete rhodes malta asia europe africa
    paris london berlin madrid rome roma lima oslo bern riga vilnius tallinn kyiv kiev minsk
    moscow tokyo kyoto osaka delhi mumbai dhaka lagos accra dakar tunis cairo baku sana doha
    dubai muscat tehran kabul hanoi manila seoul taipei sydney perth darwin hobart auckland
    quito bogota caracas havana nassau austin boston denver dallas houston miami orlando tampa
    reno salem dover trenton albany boise helena lansing phoenix sacramento toledo dayton akron
    nice lyon lille nantes rennes brest metz nancy dijon tours arles avignon toulouse bordeaux
    milan turin genoa naples bari pisa siena parma verona padua trieste bologna florence venice
    porto braga faro leon vigo bilbao malaga sevilla seville granada cordoba toledo valencia
    bonn kiel ulm trier mainz essen halle jena gera hamburg munich dresden leipzig bremen
    vienna graz linz salzburg prague brno zurich basel geneva lausanne lugano
    warsaw krakow gdansk lodz poznan lublin sofia varna athens sparta patras lisbon
    amsterdam rotterdam utrecht delft leiden breda antwerp ghent bruges brussels liege namur
    dublin cork galway belfast derby leeds york bath hull bristol oxford cambridge
    stockholm uppsala malmo bergen tromso turku oulu helsinki tampere aarhus odense
    reykjavik budapest pecs szeged debrecen bucharest arad sibiu cluj iasi split zadar
    zagreb pula ljubljana sarajevo mostar skopje tirana durres ankara izmir bursa konya adana
    tbilisi yerevan astana almaty tashkent samarkand bukhara ural volga tula omsk tomsk kazan
    perm samara ufa sochi yalta odesa odessa lviv kharkiv dnipro herat kandahar lahore karachi
    quetta agra pune patna surat indore bhopal nagpur jaipur kochi goa colombo kandy male
    kathmandu thimphu yangon bangkok phuket vientiane phnom penh jakarta bandung medan
    surabaya bali java davao cebu busan incheon daegu nara kobe sendai sapporo nagoya
    beijing shanghai wuhan xian harbin tianjin macau lhasa ulan bator nairobi mombasa
    kampala kigali luanda harare lusaka maputo durban soweto tripoli benghazi rabat
    fez fes tangier marrakesh oran algiers abuja kano ibadan lome cotonou bamako niamey
    khartoum juba asmara mogadishu addis ababa kinshasa brazzaville libreville yaounde
    douala windhoek gaborone maseru mbabane antananarivo moroni victoria port louis
    santiago valparaiso mendoza rosario salta cusco arequipa trujillo cali medellin
    cartagena maracaibo montevideo asuncion sucre potosi manaus belem recife natal
    salvador fortaleza curitiba santos campinas rio sao paulo brasilia cayenne
    managua leon granada tegucigalpa belmopan kingston bridgetown roseau castries
    toronto ottawa montreal quebec calgary edmonton regina winnipeg halifax vancouver
    anchorage juneau honolulu hilo tucson mesa fresno tacoma seattle portland eugene
    omaha tulsa wichita topeka memphis nashville atlanta raleigh richmond norfolk
    canberra adelaide brisbane cairns wellington dunedin nelson napier suva apia
    avalon atlantis troy babylon carthage ithaca sodom nineveh ur uruk eridu
    """.split()  # noqa: SIM905 (a word list reads better as text)
)


def _syllable(rng: random.Random) -> str:
    return rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)


def _clean(word: str) -> bool:
    """True for a pronounceable word: no triple vowels or consonant pile-ups, sane length."""
    if not 3 <= len(word) <= 11 or "aa" in word or "ii" in word or "uu" in word or "yy" in word:
        return False
    run_v = run_c = 0
    for ch in word:
        if ch in "aeiouy":
            run_v += 1
            run_c = 0
        else:
            run_c += 1
            run_v = 0
        if run_v > 2 or run_c > 3:
            return False
    return True


class NameMaker:
    """Makes names of each kind from one seeded stream.

    Args:
        rng: The stream; the same stream state gives the same names.
    """

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def _word(self, n_syll: int, ending: str = "") -> str:
        rng = self._rng
        while True:
            word = "".join(_syllable(rng) for _ in range(n_syll))
            if ending:
                # Drop a final vowel before a vowel-initial ending ("Velo" + "ia" -> "Velia").
                if word[-1] in "aeiouy" and ending[0] in "aeiouy":
                    word = word[:-1]
                word += ending
            if _clean(word) and word not in BLOCKLIST:
                return word.capitalize()

    def root(self) -> str:
        """A bare two-syllable root (rivers, mountains, languages, works)."""
        return self._word(self._rng.choice((1, 2, 2)), self._rng.choice(("", "", "a", "en", "or")))

    def place(self) -> str:
        """A city name such as ``Eldmora``."""
        rng = self._rng
        return self._word(rng.choice((1, 1, 2)), rng.choice(_PLACE_ENDINGS))

    def country(self) -> str:
        """A country name such as ``Varenia``."""
        return self._word(self._rng.choice((1, 2)), self._rng.choice(_COUNTRY_ENDINGS))

    def given(self, female: bool) -> str:
        """A given name."""
        endings = _GIVEN_F_ENDINGS if female else _GIVEN_M_ENDINGS
        return self._word(1, self._rng.choice(endings))

    def surname(self) -> str:
        """A surname such as ``Oktali``."""
        rng = self._rng
        return self._word(rng.choice((1, 2, 2)), rng.choice(_SURNAME_ENDINGS))

    def unique(self, make: str, n: int, taken: set[str] | None = None) -> list[str]:
        """``n`` distinct names of one kind, in generation order.

        Args:
            make: Method name: ``root``, ``place``, ``country``, ``surname``.
            n: How many.
            taken: Names to avoid as well (updated in place).
        """
        seen = set() if taken is None else taken
        fn = getattr(self, make)
        out: list[str] = []
        while len(out) < n:
            name = fn()
            if name not in seen:
                seen.add(name)
                out.append(name)
        return out


def near_duplicate(name: str, rng: random.Random) -> str:
    """A one-edit variant of ``name`` ("Oktali" -> "Oktalis" / "Oktela" / "Okttali")."""
    choice = rng.randrange(3)
    if choice == 0:
        return name + ("s" if name[-1] != "s" else "e")
    vowels = [i for i, ch in enumerate(name) if ch in "aeiou" and i > 0]
    if choice == 1 and vowels:
        i = vowels[-1]
        repl = "aeiou"[("aeiou".index(name[i]) + 1 + rng.randrange(4)) % 5]
        return name[:i] + repl + name[i + 1 :]
    return name[:-1] + ("a" if name[-1] != "a" else "e")


def demonym(country: str) -> str:
    """Adjective of a country name ("Varenia" -> "Varenian", "Oskland" -> "Osklandic")."""
    if country.endswith("a"):
        return country + "n"
    if country.endswith("land"):
        return country + "ic"
    if country.endswith("e"):
        return country[:-1] + "ian"
    return country + "ian"
