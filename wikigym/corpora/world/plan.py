"""The entity table of the world: counts, attributes and relation edges as arrays.

Everything here is planned before any text is written, from one numpy stream, so
articles can be rendered one at a time afterwards. Arrays are indexed by the local
index inside an entity type; ``-1`` means "no value" and year ``0`` means "none".
At the end every array becomes a Python list, which renders much faster than
numpy scalars.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from wikigym.corpora.world import schema

_LAST_YEAR = 2023


@dataclass
class Block:
    """Attributes of one entity type: name -> list (one entry per entity)."""

    count: int
    offset: int
    cols: dict[str, list] = field(default_factory=dict)


def type_counts(articles: int) -> dict[str, int]:
    """How many entities of each type a world of ``articles`` articles has.

    Raises:
        ValueError: ``articles`` is below 50 (too few to give every type an entity).
    """
    if articles < 50:
        raise ValueError(
            f"WorldConfig.articles must be at least 50 to hold every entity type; got {articles}"
        )
    frac = {
        "city": 0.14,
        "organisation": 0.10,
        "work": 0.17,
        "event": 0.07,
        "river": 0.03,
        "mountain": 0.03,
        "award": 0.02,
    }
    counts = {
        "country": max(4, round(articles * 0.006)),
        "language": max(3, round(articles * 0.003)),
    }
    for name, f in frac.items():
        counts[name] = max(3, round(articles * f))
    counts["person"] = articles - sum(counts.values())
    return {t: counts[t] for t in schema.ENTITY_TYPES}


def _skewed(g: np.random.Generator, pool: np.ndarray, n: int, power: float = 2.0) -> np.ndarray:
    """``n`` picks from ``pool``, favouring its first entries (they become hubs)."""
    if len(pool) == 0:
        return np.full(n, -1, np.int64)
    idx = (g.random(n) ** power * len(pool)).astype(np.int64)
    return pool[idx]


def _office(
    g: np.random.Generator, first: np.ndarray, rest: np.ndarray, holds: np.ndarray
) -> np.ndarray:
    """An office holder for each entity where ``holds``, each person holding one office at
    most (one mayor per city, one chief executive per company: a person who led two cities
    at once reads as an error): people of ``first`` (politicians for mayors) in random order,
    then of ``rest``; entities beyond both pools hold none (-1)."""
    out = np.full(len(holds), -1, np.int64)
    seats = np.flatnonzero(holds)
    people = np.concatenate([g.permutation(first), g.permutation(np.setdiff1d(rest, first))])
    k = min(len(seats), len(people))
    out[seats[:k]] = people[:k]
    return out


def _pick_before(
    g: np.random.Generator, pool: np.ndarray, pool_years: np.ndarray, limits: np.ndarray
) -> np.ndarray:
    """For each limit, a pool member whose year is <= limit (-1 if none)."""
    n = len(limits)
    if len(pool) == 0:
        return np.full(n, -1, np.int64)
    order = np.argsort(pool_years, kind="stable")
    sp, sy = pool[order], pool_years[order]
    k = np.searchsorted(sy, limits, side="right")
    idx = np.minimum((g.random(n) * k).astype(np.int64), len(sp) - 1)
    return np.where(k > 0, sp[idx], -1)


def _csr(keys: np.ndarray, n_keys: int) -> tuple[list[int], list[int]]:
    """Group item indices by key: items of key k are ``items[start[k]:start[k+1]]``."""
    valid = np.flatnonzero(keys >= 0)
    order = valid[np.argsort(keys[valid], kind="stable")]
    start = np.zeros(n_keys + 1, np.int64)
    np.cumsum(np.bincount(keys[valid], minlength=n_keys), out=start[1:])
    return start.tolist(), order.tolist()


def _kinds(g: np.random.Generator, n: int, p: tuple[float, ...]) -> np.ndarray:
    """Subkinds with every kind present at least once (the first ones are fixed)."""
    kinds = g.choice(len(p), size=n, p=np.asarray(p) / sum(p))
    kinds[: len(p)] = np.arange(len(p))
    return kinds


def _dates(g: np.random.Generator, n: int, lo: int, hi: int) -> tuple[np.ndarray, ...]:
    return g.integers(lo, hi + 1, n), g.integers(1, 13, n), g.integers(1, 29, n)


def _pairs(g: np.random.Generator, members: np.ndarray, n_total: int) -> np.ndarray:
    """A symmetric partner array pairing consecutive ``members``."""
    partner = np.full(n_total, -1, np.int64)
    m = len(members) - len(members) % 2
    a, b = members[0:m:2], members[1:m:2]
    partner[a], partner[b] = b, a
    return partner


class Planner:
    """Plans attributes and relations of every entity type.

    Args:
        seed: World seed.
        counts: Output of :func:`type_counts`.
        version: The world generator's version (``"1"``: office holders drawn with
            repetition, so a person may lead two cities; ``"2"``: one office per person).
    """

    def __init__(self, seed: int, counts: dict[str, int], version: str = "2") -> None:
        self.version = version
        self.g = np.random.default_rng([seed, 0x30C1D])
        self.n = counts
        self.a: dict[str, dict[str, np.ndarray]] = {t: {} for t in schema.ENTITY_TYPES}

    def plan(self) -> dict[str, dict[str, np.ndarray]]:
        """Run every step; returns type -> column -> array."""
        self._countries_languages()
        self._cities()
        self._people()
        self._organisations()
        self._people_links()
        self._awards()
        self._works()
        self._events()
        self._rivers_mountains()
        return self.a

    def _countries_languages(self) -> None:
        g, nk, nl = self.g, self.n["country"], self.n["language"]
        k = self.a["country"]
        k["population"] = (np.exp(g.normal(15.0, 1.3, nk))).astype(np.int64) + 50_000
        k["area_km2"] = (np.exp(g.normal(11.0, 1.2, nk))).astype(np.int64) + 500
        k["ind_y"], k["ind_m"], k["ind_d"] = _dates(g, nk, 1620, 1995)
        lang = g.integers(0, nl, nk)
        lang[: min(nk, nl)] = np.arange(min(nk, nl))
        k["language"] = lang
        k["form"] = g.integers(0, len(schema.OFFICIAL_FORMS), nk)
        k["unit"] = g.integers(0, len(schema.CURRENCY_UNITS), nk)
        lg = self.a["language"]
        lg["family"] = g.integers(0, len(schema.LANGUAGE_FAMILIES), nl)
        lg["speakers"] = (np.exp(g.normal(14.0, 1.5, nl))).astype(np.int64) + 2000
        lg["script"] = g.integers(0, len(schema.WRITING_SYSTEMS), nl)

    def _cities(self) -> None:
        g, nc, nk = self.g, self.n["city"], self.n["country"]
        c = self.a["city"]
        country = _skewed(g, np.arange(nk), nc, 1.5)
        country[:nk] = g.permutation(nk)  # every country gets a city
        c["country"] = country
        c["population"] = (np.exp(g.normal(10.5, 1.4, nc))).astype(np.int64) + 300
        c["area_km2"] = (np.exp(g.normal(4.5, 1.0, nc))).astype(np.int64) + 2
        c["founded"] = g.integers(1010, 1900, nc)
        # Capital: the first city of each country; capitals are bigger.
        _, first = np.unique(country, return_index=True)
        self.a["country"]["capital"] = first
        c["population"][first] *= 4
        c["twin"] = _pairs(g, g.permutation(nc)[: int(nc * 0.3)], nc)

    def _people(self) -> None:
        g, n = self.g, self.n["person"]
        p = self.a["person"]
        w = np.asarray(schema.OCCUPATION_WEIGHTS)
        occ = g.choice(len(w), size=n, p=w / w.sum())
        occ[: len(w)] = np.arange(len(w))
        p["occupation"] = occ
        p["female"] = g.random(n) < 0.5
        p["birth_y"], p["birth_m"], p["birth_d"] = _dates(g, n, 1760, 2001)
        # Film directors and band musicians belong to the age of film and records.
        by = p["birth_y"]
        by[occ == schema.OCC_DIRECTOR[0]] = g.integers(
            1865, 2002, int((occ == schema.OCC_DIRECTOR[0]).sum())
        )
        by[occ == schema.OCC_MUSICIAN[0]] = g.integers(
            1920, 2002, int((occ == schema.OCC_MUSICIAN[0]).sum())
        )
        dy = by + g.integers(30, 97, n)
        # Everyone born before 1925 has died; later births die within the past.
        dead = g.random(n) < np.select([by < 1925, by < 1945], [1.0, 0.8], 0.15)
        dead &= (dy <= _LAST_YEAR) | (by < 1925)
        dy = np.minimum(dy, _LAST_YEAR)
        p["death_y"] = np.where(dead, dy, 0)
        _, p["death_m"], p["death_d"] = _dates(g, n, 0, 0)
        cities = np.arange(self.n["city"])
        p["born_in"] = _skewed(g, cities, n, 1.6)
        died = _skewed(g, cities, n, 1.6)
        died = np.where(g.random(n) < 0.5, p["born_in"], died)
        p["died_in"] = np.where(dead, died, -1)
        home = self.a["city"]["country"][p["born_in"]]
        other = g.integers(0, self.n["country"], n)
        p["nationality"] = np.where(g.random(n) < 0.85, home, other)
        # Spouses of similar age: sort the married by birth year, pair neighbours.
        married = np.flatnonzero(g.random(n) < 0.3)
        married = married[np.argsort(by[married], kind="stable")]
        p["spouse"] = _pairs(g, married, n)

    def _pool(self, occs: tuple[int, ...], living: bool = False) -> np.ndarray:
        """People with one of ``occs``; only the living ones if asked (and any exist)."""
        p = self.a["person"]
        hit = np.isin(p["occupation"], occs)
        if living and (hit & (p["death_y"] == 0)).any():
            hit &= p["death_y"] == 0
        return np.flatnonzero(hit)

    def _living(self) -> np.ndarray:
        """Every living person (office holders are named in the present tense)."""
        return np.flatnonzero(self.a["person"]["death_y"] == 0)

    def _organisations(self) -> None:
        g, n = self.g, self.n["organisation"]
        o, p = self.a["organisation"], self.a["person"]
        kind = _kinds(g, n, (0.5, 0.25, 0.25))
        o["kind"] = kind
        ind = g.integers(0, len(schema.INDUSTRIES), n)
        companies = np.flatnonzero(kind == 0)
        ind[companies[:3]] = np.arange(min(3, len(companies)))  # publishers, studios, labels
        o["industry"] = np.where(kind == 0, ind, -1)
        o["hq"] = _skewed(g, np.arange(self.n["city"]), n, 1.5)
        business, musicians = self._pool(schema.OCC_BUSINESS), self._pool(schema.OCC_MUSICIAN)
        academics = self._pool((4, 5))
        founder = np.where(
            kind == 0,
            _skewed(g, business, n, 1.0),
            np.where(kind == 1, _skewed(g, academics, n, 1.0), _skewed(g, musicians, n, 1.0)),
        )
        o["founded_by"] = founder
        fby = p["birth_y"][founder]
        span = np.where(kind == 2, g.integers(17, 30, n), g.integers(25, 55, n))
        year = fby + span
        fdy = p["death_y"][founder]
        year = np.where((fdy > 0) & (year > fdy), fdy - 1, year)
        o["founding_year"] = np.minimum(year, _LAST_YEAR - 1)
        # Office holders are named in the present tense, so they are living people.
        ceos = self._pool(schema.OCC_BUSINESS, living=True)
        if self.version == "1":
            o["ceo"] = np.where(kind == 0, _skewed(g, ceos, n, 1.0), -1)
        else:
            o["ceo"] = _office(g, ceos, self._living(), kind == 0)
        o["employees"] = (np.exp(g.normal(6.5, 1.5, n))).astype(np.int64) + 5
        o["genre"] = np.where(kind == 2, g.integers(0, len(schema.MUSIC_GENRES), n), -1)

    def _people_links(self) -> None:
        g, n = self.g, self.n["person"]
        p, o = self.a["person"], self.a["organisation"]
        by, kind, fy = p["birth_y"], o["kind"], o["founding_year"]
        companies, unis, bands = (np.flatnonzero(kind == k) for k in range(3))
        edu = _pick_before(g, unis, fy[unis], by + 18)
        p["educated_at"] = np.where(g.random(n) < 0.7, edu, -1)
        emp = _pick_before(g, companies, fy[companies], by + 40)
        p["employer"] = np.where(g.random(n) < 0.45, emp, -1)
        member = np.full(n, -1, np.int64)
        musicians = self._pool(schema.OCC_MUSICIAN)
        member[musicians] = _pick_before(g, bands, fy[bands], by[musicians] + 40)
        # Founders are members of their bands and CEOs work for their companies.
        founders = o["founded_by"][bands]
        member[founders[founders >= 0]] = bands[founders >= 0]
        p["member_of"] = member
        ceos = o["ceo"][companies]
        p["employer"][ceos[ceos >= 0]] = companies[ceos >= 0]
        mayors = self._pool(schema.OCC_POLITICIAN, living=True)
        nc = self.n["city"]
        if self.version == "1":
            self.a["city"]["mayor"] = np.where(g.random(nc) < 0.6, _skewed(g, mayors, nc, 1.0), -1)
        else:
            free = np.setdiff1d(self._living(), o["ceo"][o["ceo"] >= 0])  # one office each
            mayor = _office(g, np.intersect1d(mayors, free), free, g.random(nc) < 0.6)
            self.a["city"]["mayor"] = mayor

    def _awards(self) -> None:
        g, n, np_ = self.g, self.n["award"], self.n["person"]
        aw, p, o = self.a["award"], self.a["person"], self.a["organisation"]
        aw["field"] = g.integers(0, len(schema.AWARD_FIELDS), n)
        givers = np.flatnonzero(o["kind"] < 2)
        aw["presented_by"] = _skewed(g, givers, n, 1.3)
        est = g.integers(1850, 2011, n)
        aw["established_year"] = np.maximum(est, o["founding_year"][aw["presented_by"]] + 1)
        aw["template"] = g.integers(0, 3, n)
        by, dy = p["birth_y"], p["death_y"]
        award = _pick_before(g, np.arange(n), aw["established_year"], by + 60)
        year = np.maximum(aw["established_year"][award], by + 28) + g.integers(0, 20, np_)
        last = np.where(dy > 0, dy, _LAST_YEAR)
        ok = (g.random(np_) < 0.35) & (award >= 0) & (year <= last)
        p["award"] = np.where(ok, award, -1)
        p["award_year"] = np.where(ok, year, 0)

    def _works(self) -> None:
        g, n = self.g, self.n["work"]
        w, p, o = self.a["work"], self.a["person"], self.a["organisation"]
        kind = _kinds(g, n, (0.45, 0.3, 0.25))
        w["kind"] = kind
        writers, directors = self._pool(schema.OCC_WRITER), self._pool(schema.OCC_DIRECTOR)
        bands = np.flatnonzero(o["kind"] == 2)
        creator = np.select(
            [kind == 0, kind == 1],
            [_skewed(g, writers, n, 1.8), _skewed(g, directors, n, 1.8)],
            _skewed(g, bands, n, 1.5),
        )
        w["creator"] = creator
        is_band = kind == 2
        born, died = np.zeros(n, np.int64), np.zeros(n, np.int64)
        born[is_band] = o["founding_year"][creator[is_band]]
        born[~is_band] = p["birth_y"][creator[~is_band]]
        died[~is_band] = p["death_y"][creator[~is_band]]
        year = born + np.where(is_band, g.integers(0, 25, n), g.integers(22, 70, n))
        year = np.where((died > 0) & (year > died), died, year)
        w["year"] = np.minimum(year, _LAST_YEAR)
        pub = np.full(n, -1, np.int64)
        for k in range(3):  # publishing, film, music companies serve novels, films, albums
            firms = np.flatnonzero(o["industry"] == k)
            sel = np.flatnonzero(kind == k)
            pub[sel] = _pick_before(g, firms, o["founding_year"][firms], w["year"][sel])
        w["publisher"] = pub
        n_genre = (len(schema.NOVEL_GENRES), len(schema.FILM_GENRES), len(schema.MUSIC_GENRES))
        w["genre"] = (g.random(n) * np.asarray(n_genre)[kind]).astype(np.int64)
        person_creator = np.where(is_band, 0, np.maximum(creator, 0))
        home_lang = self.a["country"]["language"][p["nationality"][person_creator]]
        lang = np.where(g.random(n) < 0.8, home_lang, g.integers(0, self.n["language"], n))
        w["language"] = np.where(is_band, -1, lang)
        novels = np.flatnonzero(kind == 0)
        src = _pick_before(g, novels, w["year"][novels], w["year"] - 1)
        w["based_on"] = np.where((kind == 1) & (g.random(n) < 0.3), src, -1)
        w["same_title"] = g.random(n) < 0.4  # adaptations that keep the novel's title
        w["template"] = g.integers(0, 8, n)

    def _events(self) -> None:
        g, n, nk = self.g, self.n["event"], self.n["country"]
        e = self.a["event"]
        kind = _kinds(g, n, (0.4, 0.35, 0.25))
        e["kind"] = kind
        e["location"] = _skewed(g, np.arange(self.n["city"]), n, 1.5)
        lo = np.select([kind == 0, kind == 1], [1500, 1850], 1600)
        e["y"] = lo + (g.random(n) * (np.select([kind == 0, kind == 1], [1950, 2016], 2000) - lo))
        e["y"] = e["y"].astype(np.int64)
        _, e["m"], e["d"] = _dates(g, n, 0, 0)
        home = self.a["city"]["country"][e["location"]]
        part = np.full((n, 3), -1, np.int64)
        part[:, 0] = home
        part[:, 1] = (home + 1 + g.integers(0, max(1, nk - 1), n)) % nk
        third = (home + 1 + g.integers(0, max(1, nk - 1), n)) % nk
        part[:, 2] = np.where((kind == 2) & (third != part[:, 1]) & (g.random(n) < 0.5), third, -1)
        part[kind == 1] = -1
        e["participants"] = part
        orgs = np.arange(self.n["organisation"])
        e["organiser"] = np.where(kind == 1, _skewed(g, orgs, n, 1.0), -1)
        e["number"] = np.where(
            kind == 0,
            g.integers(120, 80_000, n),
            np.where(kind == 1, g.integers(500, 300_000, n), 0),
        )
        e["festival_word"] = g.integers(0, 7, n)

    def _rivers_mountains(self) -> None:
        g, nr, nm, nk = self.g, self.n["river"], self.n["mountain"], self.n["country"]
        r, c = self.a["river"], self.a["city"]
        r["source_country"] = _skewed(g, np.arange(nk), nr, 1.3)
        start, items = _csr(c["country"], nk)
        flows = np.full((nr, 3), -1, np.int64)
        want = g.integers(1, 4, nr)
        pick = g.random((nr, 3))
        for i, k in enumerate(r["source_country"].tolist()):
            lo, hi = start[k], start[k + 1]
            chosen = sorted({items[lo + int(pick[i, j] * (hi - lo))] for j in range(want[i])})
            flows[i, : len(chosen)] = chosen
        r["flows_through"] = flows
        r["mouth"] = g.integers(0, self.n["city"], nr)
        r["length_km"] = g.integers(25, 3600, nr)
        trib = (g.random(nr) * np.arange(nr)).astype(np.int64)
        r["tributary_of"] = np.where((np.arange(nr) > 0) & (g.random(nr) < 0.25), trib, -1)
        m, p = self.a["mountain"], self.a["person"]
        m["country"] = _skewed(g, np.arange(nk), nm, 1.3)
        m["elevation_m"] = g.integers(800, 8600, nm)
        climbers = self._pool(schema.OCC_MOUNTAINEER)
        climber = np.where(g.random(nm) < 0.7, _skewed(g, climbers, nm, 1.2), -1)
        m["climber"] = climber
        safe = np.maximum(climber, 0)
        year = p["birth_y"][safe] + g.integers(20, 45, nm)
        dy = p["death_y"][safe]
        year = np.minimum(np.where(dy > 0, np.minimum(year, dy), year), _LAST_YEAR)
        m["ascent_year"] = np.where(climber >= 0, year, 0)
        m["range"] = g.integers(0, max(2, nm // 5), nm)
        m["template"] = g.integers(0, 2, nm)


def plan_arrays(
    seed: int, counts: dict[str, int], version: str = "2"
) -> dict[str, dict[str, np.ndarray]]:
    """All attribute arrays of a world (see :class:`Planner`)."""
    return Planner(seed, counts, version).plan()


def to_lists(arrays: dict[str, dict[str, np.ndarray]]) -> dict[str, dict[str, list]]:
    """The same columns as Python lists (2-D arrays become lists of tuples without -1)."""
    out: dict[str, dict[str, list]] = {}
    for t, cols in arrays.items():
        out[t] = {}
        for name, arr in cols.items():
            if arr.ndim == 2:
                out[t][name] = [tuple(v for v in row if v >= 0) for row in arr.tolist()]
            else:
                out[t][name] = arr.tolist()
    return out


def inverse(keys: list[int], n_keys: int) -> tuple[list[int], list[int]]:
    """CSR grouping of item indices by key (see :func:`_csr`)."""
    return _csr(np.asarray(keys, np.int64), n_keys)
