"""Titles, display names, redirects and disambiguation pages of every entity.

Titles are unique over the whole dump (articles, redirects and disambiguation
pages): a taken title gets a Wikipedia-style qualifier ("Eldmora, Varenia",
"Varen Oktali (painter)", "The Crown of Tessa (film)"). Near-duplicate names
and shared names are planted here on purpose, as distractors.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from wikigym.corpora.world import schema
from wikigym.corpora.world.names import NameMaker, demonym, near_duplicate

_BAND_NOUNS = ("Lanterns", "Orchard", "Signal", "Harbour", "Engines", "Choir", "Tide", "Foxes")
_WORK_NOUNS = ("Lantern", "Orchard", "Tide", "Crown", "Bridge", "Harbour", "Garden", "Mirror",
               "Storm", "Daughter", "Road", "Letters", "Bell", "Ferryman")  # fmt: skip
_SEASONS = ("Winter", "Summer", "Spring", "Autumn")
_FESTIVAL_WORDS = ("Lantern", "Harvest", "Music", "Film", "Winter", "Folk", "Jazz")
_UNI_FORMS = ("University of {c}", "{c} University", "{c} Institute of Technology",
              "{c} Polytechnic", "Royal Academy of {c}", "{c} Conservatory")  # fmt: skip


@dataclass
class Naming:
    """Names of all entities, indexed by global id.

    Attributes:
        titles: Page title of each entity.
        names: Display name (the title without its qualifier).
        aliases: Redirect titles to each entity (usually empty).
        full_names: Person lead names with a middle name, else None (by person index).
        former_names: Former city names, else None (by city index).
        ranges: Mountain range names (text values).
        languages: Display name of each language (by language index).
        disambiguation: (title, member ids, kind, "see also" ids) of each disambiguation
            page; "see also" lists people whose surname is a one-letter variant.
        near_duplicates: Pairs of person ids whose names differ by one edit.
    """

    titles: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    aliases: list[tuple[str, ...]] = field(default_factory=list)
    full_names: list[str | None] = field(default_factory=list)
    former_names: list[str | None] = field(default_factory=list)
    ranges: list[str] = field(default_factory=list)
    disambiguation: list[tuple[str, tuple[int, ...], str, tuple[int, ...]]] = field(
        default_factory=list
    )
    near_duplicates: list[tuple[int, int]] = field(default_factory=list)


class _Namer:
    def __init__(self, seed: int, counts: dict[str, int], cols: dict[str, dict[str, list]]):
        self.rng = random.Random(f"wikigym-world-names:{seed}")
        self.nm = NameMaker(self.rng)
        self.n = counts
        self.cols = cols
        self.off: dict[str, int] = {}
        total = 0
        for t in schema.ENTITY_TYPES:
            self.off[t] = total
            total += counts[t]
        self.out = Naming(titles=[""] * total, names=[""] * total, aliases=[()] * total)
        self.taken: dict[str, int] = {}
        self.surnames: list[str] = []
        self.person_surname: list[int] = []
        self.person_given: list[str] = []
        self.variants: dict[int, list[int]] = {}

    def _claim(self, gid: int, display: str, candidates: list[str]) -> str:
        for cand in candidates:
            if cand not in self.taken:
                break
        else:
            k = 2
            while f"{candidates[0]} ({k})" in self.taken:
                k += 1
            cand = f"{candidates[0]} ({k})"
        self.taken[cand] = gid
        self.out.titles[gid] = cand
        self.out.names[gid] = display
        return cand

    def _alias(self, gid: int, alias: str) -> None:
        if alias not in self.taken:
            self.taken[alias] = gid
            self.out.aliases[gid] = (*self.out.aliases[gid], alias)

    def run(self) -> Naming:
        self._countries_languages()
        self._cities()
        self._people()
        self._organisations()
        self._works()
        self._events()
        self._rivers_mountains_awards()
        self._surname_pages()
        return self.out

    def _countries_languages(self) -> None:
        off, nk = self.off["country"], self.n["country"]
        names = self.nm.unique("country", nk, set())
        forms = self.cols["country"]["form"]
        for i, name in enumerate(names):
            self._claim(off + i, name, [name])
        for i, name in enumerate(names):
            self._alias(off + i, f"{schema.OFFICIAL_FORMS[forms[i]]} {name}")
        seen: set[str] = set()
        off = self.off["language"]
        for i in range(self.n["language"]):
            name = demonym(self.nm.root())
            while name in seen:
                name = demonym(self.nm.root())
            seen.add(name)
            self._claim(off + i, name, [f"{name} language"])

    def _cities(self) -> None:
        rng, off, nc = self.rng, self.off["city"], self.n["city"]
        country = self.cols["city"]["country"]
        ktitle = self.out.titles
        koff = self.off["country"]
        pool = iter(self.nm.unique("place", nc, set(self.taken)))
        groups: dict[str, list[int]] = {}
        former: list[str | None] = []
        for i in range(nc):
            base = None
            if i >= 10 and rng.random() < 0.06:
                j = rng.randrange(i)
                if country[j] != country[i]:
                    base = self.out.names[off + j]
                    groups.setdefault(base, [off + j]).append(off + i)
            if base is None:
                base = next(pool)
            self._claim(off + i, base, [base, f"{base}, {ktitle[koff + country[i]]}"])
            former.append(self.nm.place() if rng.random() < 0.08 else None)
        for i, name in enumerate(former):
            if name is not None:
                self._alias(off + i, name)
        self.out.former_names = former
        for base, members in groups.items():
            self._disambiguation(f"{base} (disambiguation)", members, "place")

    def _disambiguation(
        self, title: str, members: list[int], kind: str, see_also: tuple[int, ...] = ()
    ) -> None:
        if title not in self.taken:
            self.taken[title] = -1
            self.out.disambiguation.append((title, tuple(members), kind, see_also))

    def _people(self) -> None:
        rng, nm, off, n = self.rng, self.nm, self.off["person"], self.n["person"]
        p = self.cols["person"]
        pool_size = max(20, n // 20)
        given = {
            f: [nm.given(f) for _ in range(pool_size)] for f in (False, True)
        }  # repeats are fine: given names are shared
        self.surnames = nm.unique("surname", max(20, n // 5), set())
        sindex = {s: k for k, s in enumerate(self.surnames)}
        groups: dict[str, list[int]] = {}
        full: list[str | None] = []
        for i in range(n):
            female = p["female"][i]
            if i > 20 and rng.random() < 0.04:  # near-duplicate of an earlier person
                j = rng.randrange(i)
                first = self.person_given[j]
                variant = near_duplicate(self.surnames[self.person_surname[j]], rng)
                sid = sindex.get(variant)
                if sid is None:
                    sid = sindex[variant] = len(self.surnames)
                    self.surnames.append(variant)
                base_sid = self.person_surname[j]
                if sid != base_sid and sid not in self.variants.setdefault(base_sid, []):
                    self.variants[base_sid].append(sid)
                self.out.near_duplicates.append((off + j, off + i))
            else:
                first = rng.choice(given[female])
                sid = int(len(self.surnames) * rng.random() ** 1.4)
            self.person_given.append(first)
            self.person_surname.append(sid)
            display = f"{first} {self.surnames[sid]}"
            occ = schema.OCCUPATIONS[p["occupation"][i]]
            by = p["birth_y"][i]
            if display in self.taken and self.taken[display] >= off:
                groups.setdefault(display, [self.taken[display]]).append(off + i)
            self._claim(
                off + i, display, [display, f"{display} ({occ})", f"{display} ({occ}, born {by})"]
            )
            middle = rng.choice(given[female]) if rng.random() < 0.25 else None
            full.append(f"{first} {middle} {self.surnames[sid]}" if middle else None)
        for i, name in enumerate(full):
            if name is not None:
                self._alias(off + i, name)
        self.out.full_names = full
        cap = max(3, n // 40)
        for display, members in list(groups.items())[:cap]:
            self._disambiguation(f"{display} (disambiguation)", members, "person")

    def _organisations(self) -> None:
        rng, off = self.rng, self.off["organisation"]
        o = self.cols["organisation"]
        names, titles = self.out.names, self.out.titles
        coff, koff = self.off["city"], self.off["country"]
        for i in range(self.n["organisation"]):
            kind, hq = o["kind"][i], o["hq"][i]
            city = names[coff + hq]
            if kind == 0:
                founder = o["founded_by"][i]
                if founder >= 0 and rng.random() < 0.6:
                    head = self.surnames[self.person_surname[founder]]
                else:
                    head = city if rng.random() < 0.5 else self.nm.root()
                suffix = rng.choice(schema.COMPANY_SUFFIX[schema.INDUSTRIES[o["industry"][i]]])
                base = f"{head} {suffix}"
                self._claim(off + i, base, [base, f"{base} ({city})"])
            elif kind == 1:
                forms = [f.format(c=city) for f in _UNI_FORMS]
                country = titles[koff + self.cols["city"]["country"][hq]]
                forms.append(f"{forms[0]} ({country})")
                self._claim(off + i, forms[0], forms)
                self.out.names[off + i] = self.out.titles[off + i]
            else:
                root = self.nm.root()
                base = f"The {root}s" if rng.random() < 0.4 else f"{root} {rng.choice(_BAND_NOUNS)}"
                self._claim(off + i, base, [base, f"{base} (band)"])

    def _work_base(self, template: int) -> str:
        rng, nm = self.rng, self.nm
        place = self.out.names[self.off["city"] + rng.randrange(self.n["city"])]
        noun = rng.choice(_WORK_NOUNS)
        if template == 0:
            return f"The {noun} of {place}"
        if template == 1:
            return nm.root()
        if template == 2:
            return f"{nm.root()} {noun}s"
        if template == 3:
            return f"A {rng.choice(_SEASONS)} in {place}"
        if template == 4:
            return f"The Last {noun} of {nm.root()}"
        if template == 5:
            return f"Letters to {rng.choice(self.person_given)}"
        if template == 6:
            return f"Songs from {place}"
        return f"The {nm.root()} {noun}"

    def _works(self) -> None:
        off = self.off["work"]
        w = self.cols["work"]
        for i in range(self.n["work"]):
            kind, src = w["kind"][i], w["based_on"][i]
            word = schema.WORK_KINDS[kind]
            if src >= 0 and w["same_title"][i] and src < i:
                base = self.out.names[off + src]
            else:
                base = self._work_base(w["template"][i])
            year = w["year"][i]
            self._claim(off + i, base, [base, f"{base} ({word})", f"{base} ({year} {word})"])

    def _events(self) -> None:
        off, e = self.off["event"], self.cols["event"]
        names, coff = self.out.names, self.off["city"]
        for i in range(self.n["event"]):
            kind, y = e["kind"][i], e["y"][i]
            city = names[coff + e["location"][i]]
            if kind == 0:
                base = f"Battle of {city}"
            elif kind == 1:
                base = f"{city} {_FESTIVAL_WORDS[e['festival_word'][i]]} Festival"
            else:
                base = f"Treaty of {city}"
            self._claim(off + i, base, [base, f"{base} ({y})"])

    def _rivers_mountains_awards(self) -> None:
        rng, nm = self.rng, self.nm
        off = self.off["river"]
        for i in range(self.n["river"]):
            root = nm.root()
            self._claim(off + i, f"{root} River", [f"{root} River", f"{root} River (river)"])
            self._alias(off + i, f"River {root}")
        m = self.cols["mountain"]
        n_ranges = max(m["range"]) + 1 if m["range"] else 1
        self.out.ranges = [f"{nm.root()} {rng.choice(('Range', 'Mountains', 'Highlands'))}"
                           for _ in range(n_ranges)]  # fmt: skip
        off = self.off["mountain"]
        for i in range(self.n["mountain"]):
            root = nm.root()
            title = f"Mount {root}" if m["template"][i] == 0 else f"{root} Peak"
            self._claim(off + i, title, [title, f"{title} (mountain)"])
            self._alias(off + i, f"{root} Mountain")
        a = self.cols["award"]
        off, ooff = self.off["award"], self.off["organisation"]
        for i in range(self.n["award"]):
            fld = schema.AWARD_FIELDS[a["field"][i]].title()
            tpl = a["template"][i]
            if tpl == 0:
                base = f"{rng.choice(self.surnames)} Prize for {fld}"
            elif tpl == 1:
                base = f"{nm.root()} Medal"
            else:
                base = f"{self.out.names[ooff + a['presented_by'][i]]} Award for {fld}"
            self._claim(off + i, base, [base, f"{base} (award)"])

    def _surname_pages(self) -> None:
        by_surname: dict[int, list[int]] = {}
        off = self.off["person"]
        for i, sid in enumerate(self.person_surname):
            by_surname.setdefault(sid, []).append(off + i)
        cap = max(3, sum(self.n.values()) // 300)
        made = 0
        for sid in sorted(by_surname):
            members = by_surname[sid]
            if len(members) < 3:
                continue
            name = self.surnames[sid]
            title = name if name not in self.taken else f"{name} (surname)"
            see_also = [g for v in self.variants.get(sid, ()) for g in by_surname[v]][:10]
            self._disambiguation(title, members[:40], "surname", tuple(see_also))
            made += 1
            if made >= cap:
                break


def name_world(seed: int, counts: dict[str, int], cols: dict[str, dict[str, list]]) -> Naming:
    """Titles, names, redirects and disambiguation pages (see :class:`Naming`)."""
    return _Namer(seed, counts, cols).run()
