"""One renderer per entity type: facts -> sentences, infobox, sections, categories.

Each relation has several phrasings; the article's own stream picks one, so the
same fact reads differently across articles but identically across runs.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from wikigym.corpora.world import schema
from wikigym.corpora.world.names import demonym
from wikigym.corpora.world.phrases import FILLER
from wikigym.corpora.world.render import (
    Article,
    Piece,
    World,
    a_an,
    date_iso,
    date_text,
    fill,
    join_pieces,
    num,
    pick,
)


def _filler(a: Article, kind: str, name: str, k: int) -> None:
    if k == 0:
        return
    pool = FILLER[kind]
    first = int(a.rng.random() * len(pool))
    a.say(pool[first].format(n=name))
    if k > 1:  # a different second sentence
        second = (first + 1 + int(a.rng.random() * (len(pool) - 1))) % len(pool)
        a.say(pool[second].format(n=name))


def _ent(w: World, gid: int) -> tuple[Piece, str]:
    return w.link(gid), w.naming.titles[gid]


def person(w: World, i: int, rng: random.Random) -> Article:
    """Render the ``i``-th person."""
    p = w.cols["person"]
    gid = w.gid("person", i)
    nm = w.naming
    name = nm.names[gid]
    full = nm.full_names[i] or name
    surname = name.rsplit(" ", 1)[-1]
    pron = "She" if p["female"][i] else "He"
    a = Article(rng, "person", full, surname)
    occ = schema.OCCUPATIONS[p["occupation"][i]]
    by, bm, bd = p["birth_y"][i], p["birth_m"][i], p["birth_d"][i]
    dy, dm, dd = p["death_y"][i], p["death_m"][i], p["death_d"][i]
    alive = dy == 0

    def s() -> str:
        return surname if rng.random() < 0.5 else pron

    a.field("occupation", occ)
    if alive:
        lead = fill("'''{f}''' (born {y}) is {o}.", f=full, y=str(by), o=a_an(occ))
    else:
        lead = fill("'''{f}''' ({y}–{d}) was {o}.", f=full, y=str(by), d=str(dy), o=a_an(occ))
    a.fact((lead[0], lead[1].replace("'''", "")), ("occupation", occ, "text", None))

    a.section("Early life")
    city_link, city_title = _ent(w, w.gid("city", p["born_in"][i]))
    bdate = date_text(by, bm, bd)
    a.field("born_in", city_link[0])
    a.field("birth_date", f"{{{{birth date|{by}|{bm}|{bd}}}}}")
    born = (
        ("born_in", city_title, "entity", city_title),
        ("birth_date", date_iso(by, bm, bd), "date", None),
    )
    if rng.random() < 0.6:
        tpl = pick(rng, ("{s} was born in {c} on {d}.", "{s} was born on {d} in {c}."))
        a.fact(fill(tpl, s=surname, c=city_link, d=bdate), *born)
    else:
        a.fact(fill("{s} was born on {d}.", s=surname, d=bdate), born[1])
        tpl = pick(rng, ("{s} was born in {c}.", "{s} grew up in {c}, the city of {p} birth."))
        a.fact(fill(tpl, s=s(), c=city_link, p="her" if pron == "She" else "his"), born[0])
    nat_gid = w.gid("country", p["nationality"][i])
    nat_link, nat_title = _ent(w, nat_gid)
    official = w.naming.aliases[nat_gid]
    if official and rng.random() < 0.15:  # some links go through a redirect, as on Wikipedia
        nat_link = (f"[[{official[0]}|{nat_link[1]}]]", nat_link[1])
    a.field("nationality", nat_link[0])
    tpl = pick(rng, ("{s} was a citizen of {c}.", "{s} held the nationality of {c}."))
    a.fact(fill(tpl, s=s(), c=nat_link), ("nationality", nat_title, "entity", nat_title))
    if p["educated_at"][i] >= 0:
        link, title = _ent(w, w.gid("organisation", p["educated_at"][i]))
        a.field("educated_at", link[0])
        tpl = pick(rng, ("{s} studied at {u}.", "{s} was educated at {u}.", "{s} attended {u}."))
        a.fact(fill(tpl, s=s(), u=link), ("educated_at", title, "entity", title))
    _filler(a, "early", surname, (rng.random() < 0.5))

    a.section("Career")
    if p["employer"][i] >= 0:
        link, title = _ent(w, w.gid("organisation", p["employer"][i]))
        a.field("employer", link[0])
        tpl = pick(rng, ("{s} worked for {o}.", "{s} was employed by {o}.", "{s} joined {o}."))
        a.fact(fill(tpl, s=s(), o=link), ("employer", title, "entity", title))
    if p["member_of"][i] >= 0:
        link, title = _ent(w, w.gid("organisation", p["member_of"][i]))
        a.field("member_of", link[0])
        tpl = pick(rng, ("{s} was a member of {b}.", "{s} played in {b}."))
        a.fact(fill(tpl, s=s(), b=link), ("member_of", title, "entity", title))
    works = w.members("works_by_person", i)[:4]
    if works:
        links = [_ent(w, w.gid("work", k)) for k in works]
        a.field("notable_work", ", ".join(lk[0][0] for lk in links))
        tpl = pick(rng, ("{s} is best known for {w}.", "Notable works by {s} include {w}."))
        a.fact(
            fill(tpl, s=surname, w=join_pieces([lk[0] for lk in links])),
            *[("notable_work", t, "entity", t) for _, t in links],
        )
    _filler(a, "career", surname, 1 + (rng.random() < 0.5))

    a.section("Personal life")
    if p["spouse"][i] >= 0:
        link, title = _ent(w, w.gid("person", p["spouse"][i]))
        a.field("spouse", link[0])
        tpl = pick(
            rng, ("{s} was married to {p}.", "{s} married {p}.", "{p} was the spouse of {s}.")
        )
        a.fact(fill(tpl, s=surname, p=link), ("spouse", title, "entity", title))
    if not alive:
        dlink, dtitle = _ent(w, w.gid("city", p["died_in"][i]))
        a.field("died_in", dlink[0])
        a.field("death_date", f"{{{{death date|{dy}|{dm}|{dd}}}}}")
        tpl = pick(rng, ("{s} died in {c} on {d}.", "{s} died on {d} in {c}."))
        a.fact(
            fill(tpl, s=s(), c=dlink, d=date_text(dy, dm, dd)),
            ("died_in", dtitle, "entity", dtitle),
            ("death_date", date_iso(dy, dm, dd), "date", None),
        )
        a.category(f"{dy} deaths")
    _filler(a, "personal", surname, (rng.random() < 0.5))

    if p["award"][i] >= 0:
        a.section("Awards and honours")
        link, title = _ent(w, w.gid("award", p["award"][i]))
        a.field("award_received", f"{link[0]} ({p['award_year'][i]})")
        tpl = pick(rng, ("In {y}, {s} received the {a}.", "{s} was awarded the {a} in {y}."))
        ref = surname if tpl.startswith("In") else s()
        a.fact(fill(tpl, s=ref, a=link, y=str(p["award_year"][i])),
               ("award_received", title, "entity", title))  # fmt: skip
    a.section("Legacy")
    _filler(a, "legacy", surname, 1 + (rng.random() < 0.5))
    a.category(f"{by} births")
    a.category(f"People born in {city_title}")
    a.category(f"{occ.capitalize()}s")
    return a


def city(w: World, i: int, rng: random.Random) -> Article:
    """Render the ``i``-th city."""
    c = w.cols["city"]
    gid = w.gid("city", i)
    name = w.naming.names[gid]
    a = Article(rng, "settlement", name, name)
    k = c["country"][i]
    klink, ktitle = _ent(w, w.gid("country", k))
    a.field("located_in", klink[0])
    former = w.naming.former_names[i]
    bold = f"'''{name}''' (formerly '''{former}''')" if former else f"'''{name}'''"
    lead = fill(
        pick(rng, ("{n} is a city in {k}.", "{n} is a city located in {k}.")), n=bold, k=klink
    )
    a.fact(
        (lead[0], lead[1].replace("'''", "")),
        ("instance_of", "city", "text", None),
        ("located_in", ktitle, "entity", ktitle),
    )
    if w.cols["country"]["capital"][k] == i:
        a.say(f"It is the capital of {klink[0]}.")
    a.section("History")
    y = c["founded"][i]
    a.field("founded", str(y))
    tpl = pick(
        rng,
        (
            "{n} was founded in {y}.",
            "The city was founded in {y}.",
            "The first settlement at {n} dates from {y}.",
        ),
    )
    a.fact(fill(tpl, n=name, y=str(y)), ("founded", str(y), "date", None))
    _filler(a, "place_history", name, 1 + (rng.random() < 0.5))
    a.section("Geography")
    area = c["area_km2"][i]
    a.field("area_km2", str(area))
    tpl = pick(
        rng,
        (
            "The city covers an area of {a} square kilometres.",
            "{n} has an area of {a} square kilometres.",
        ),
    )
    a.fact(fill(tpl, n=name, a=num(area)), ("area_km2", str(area), "number", None))
    _filler(a, "place_geo", name, (rng.random() < 0.5))
    a.section("Demographics")
    pop = c["population"][i]
    a.field("population", str(pop))
    tpl = pick(
        rng,
        (
            "{n} has a population of {p}.",
            "The population of the city is {p}.",
            "About {p} people live in {n}.",
        ),
    )
    a.fact(fill(tpl, n=name, p=num(pop)), ("population", str(pop), "number", None))
    _filler(a, "place_people", name, (rng.random() < 0.5))
    if c["mayor"][i] >= 0 or c["twin"][i] >= 0:
        a.section("Government")
    if c["mayor"][i] >= 0:
        link, title = _ent(w, w.gid("person", c["mayor"][i]))
        a.field("mayor", link[0])
        tpl = pick(
            rng,
            (
                "The mayor of {n} is {p}.",
                "{p} serves as mayor of {n}.",
                "The city is led by mayor {p}.",
            ),
        )
        a.fact(fill(tpl, n=name, p=link), ("mayor", title, "entity", title))
    if c["twin"][i] >= 0:
        link, title = _ent(w, w.gid("city", c["twin"][i]))
        a.field("twinned_with", link[0])
        tpl = pick(rng, ("{n} is twinned with {c}.", "{n} has a twinning agreement with {c}."))
        a.fact(fill(tpl, n=name, c=link), ("twinned_with", title, "entity", title))
    people = w.members("people_by_birthplace", i)[:5]
    if people:
        a.section("Notable people")
        lines = []
        for pi in people:
            pl = w.link(w.gid("person", pi))
            occ = schema.OCCUPATIONS[w.cols["person"]["occupation"][pi]]
            lines.append(f"* {pl[0]} (born {w.cols['person']['birth_y'][pi]}), {occ}")
        a.raw("\n".join(lines))
    a.category(f"Cities in {ktitle}")
    a.category(f"Populated places established in {y}")
    return a


def country(w: World, i: int, rng: random.Random) -> Article:
    """Render the ``i``-th country."""
    k = w.cols["country"]
    gid = w.gid("country", i)
    name = w.naming.names[gid]
    a = Article(rng, "country", name, name)
    official = w.naming.aliases[gid][0] if w.naming.aliases[gid] else None
    bold = f"'''{name}''', officially the '''{official}'''," if official else f"'''{name}'''"
    lead = fill("{n} is a country.", n=bold)
    a.fact((lead[0], lead[1].replace("'''", "")), ("instance_of", "country", "text", None))
    a.section("History")
    y, m, d = k["ind_y"][i], k["ind_m"][i], k["ind_d"][i]
    a.field("independence_date", f"{{{{start date|{y}|{m}|{d}}}}}")
    tpl = pick(
        rng,
        (
            "{n} gained independence on {d}.",
            "{n} declared its independence on {d}.",
            "Independence was proclaimed on {d}.",
        ),
    )
    a.fact(
        fill(tpl, n=name, d=date_text(y, m, d)),
        ("independence_date", date_iso(y, m, d), "date", None),
    )
    _filler(a, "country", name, 1)
    a.section("Geography")
    cap_link, cap_title = _ent(w, w.gid("city", k["capital"][i]))
    a.field("capital", cap_link[0])
    tpl = pick(
        rng,
        (
            "The capital of {n} is {c}.",
            "Its capital and largest city is {c}.",
            "{c} is the capital of {n}.",
        ),
    )
    a.fact(fill(tpl, n=name, c=cap_link), ("capital", cap_title, "entity", cap_title))
    area = k["area_km2"][i]
    a.field("area_km2", str(area))
    a.fact(
        fill("{n} covers {a} square kilometres.", n=name, a=num(area)),
        ("area_km2", str(area), "number", None),
    )
    others = [c for c in w.members("cities_by_country", i) if c != k["capital"][i]][:5]
    if others:
        a.say(
            fill(
                "Other cities include {c}.",
                c=join_pieces([w.link(w.gid("city", c)) for c in others]),
            )[0]
        )
    _filler(a, "country", name, 1)
    a.section("Economy")
    currency = f"{demonym(name)} {schema.CURRENCY_UNITS[k['unit'][i]]}"
    a.field("currency", currency)
    tpl = pick(rng, ("The currency of {n} is the {c}.", "The official currency is the {c}."))
    a.fact(fill(tpl, n=name, c=currency), ("currency", currency, "text", None))
    a.section("Demographics")
    pop = k["population"][i]
    a.field("population", str(pop))
    tpl = pick(rng, ("{n} has a population of {p}.", "The population of {n} is {p}."))
    a.fact(fill(tpl, n=name, p=num(pop)), ("population", str(pop), "number", None))
    link, title = _ent(w, w.gid("language", k["language"][i]))
    a.field("official_language", link[0])
    tpl = pick(rng, ("The official language is {l}.", "{l} is the official language of {n}."))
    a.fact(fill(tpl, n=name, l=link), ("official_language", title, "entity", title))
    a.category("Countries")
    a.category(f"States and territories established in {y}")
    return a


def language(w: World, i: int, rng: random.Random) -> Article:
    """Render the ``i``-th language."""
    lg = w.cols["language"]
    name = w.naming.names[w.gid("language", i)]
    a = Article(rng, "language", name, name)
    lead = fill("{n} is a language.", n=f"'''{name}'''")
    a.fact((lead[0], lead[1].replace("'''", "")), ("instance_of", "language", "text", None))
    a.section("Classification")
    fam = schema.LANGUAGE_FAMILIES[lg["family"][i]]
    a.field("language_family", fam)
    tpl = pick(
        rng,
        (
            "{n} belongs to the {f} family of languages.",
            "It is a member of the {f} family of languages.",
        ),
    )
    a.fact(fill(tpl, n=name, f=fam), ("language_family", fam, "text", None))
    a.section("Speakers")
    sp = lg["speakers"][i]
    a.field("speakers", str(sp))
    a.fact(
        fill("{n} has about {s} speakers.", n=name, s=num(sp)),
        ("speakers", str(sp), "number", None),
    )
    a.section("Writing system")
    script = schema.WRITING_SYSTEMS[lg["script"][i]]
    a.field("writing_system", script)
    a.fact(
        fill("{n} is written in the {s}.", n=name, s=script),
        ("writing_system", script, "text", None),
    )
    _filler(a, "language", name, 1 + (rng.random() < 0.5))
    a.category("Languages")
    return a


def organisation(w: World, i: int, rng: random.Random) -> Article:
    """Render the ``i``-th organisation (company, university or band)."""
    o = w.cols["organisation"]
    gid = w.gid("organisation", i)
    name = w.naming.names[gid]
    kind = schema.ORG_KINDS[o["kind"][i]]
    box = {"company": "company", "university": "university", "band": "musical artist"}[kind]
    a = Article(rng, box, name, name)
    noun = {"company": "The company", "university": "The university", "band": "The band"}[kind]
    facts: list[tuple[str, str, str, str | None]] = [("instance_of", kind, "text", None)]
    if kind == "company":
        ind = schema.INDUSTRIES[o["industry"][i]]
        a.field("industry", ind)
        lead = fill("{n} is {k} company.", n=f"'''{name}'''", k=a_an(ind))
        facts.append(("industry", ind, "text", None))
    elif kind == "band":
        genre = schema.MUSIC_GENRES[o["genre"][i]]
        a.field("genre", genre)
        lead = fill("{n} is {g} band.", n=f"'''{name}'''", g=a_an(genre))
        facts.append(("genre", genre, "text", None))
    else:
        lead = fill("{n} is a university.", n=f"'''{name}'''")
    a.fact((lead[0], lead[1].replace("'''", "")), *facts)
    a.section("History")
    y = o["founding_year"][i]
    a.field("founding_year", str(y))
    year_fact = ("founding_year", str(y), "date", None)
    if o["founded_by"][i] >= 0:
        link, title = _ent(w, w.gid("person", o["founded_by"][i]))
        a.field("founded_by", link[0])
        verb = "formed" if kind == "band" else "founded"
        tpl = pick(rng, (f"{{n}} was {verb} by {{p}} in {{y}}.", f"In {{y}}, {{p}} {verb} {{n}}."))
        a.fact(fill(tpl, n=noun if tpl.startswith("{n}") else name, p=link, y=str(y)),
               ("founded_by", title, "entity", title), year_fact)  # fmt: skip
    else:
        a.fact(fill("{n} was established in {y}.", n=noun, y=str(y)), year_fact)
    _filler(a, "org", name, 1 + (rng.random() < 0.5))
    a.section("Organisation" if kind != "band" else "Career")
    link, title = _ent(w, w.gid("city", o["hq"][i]))
    a.field("headquarters", link[0])
    options = {
        "company": ("{n} is headquartered in {c}.", "Its headquarters are in {c}."),
        "university": ("The main campus of {n} is in {c}.", "The university is located in {c}."),
        "band": ("The band is based in {c}.", "{n} is based in {c}."),
    }[kind]
    a.fact(fill(pick(rng, options), n=name, c=link), ("headquarters", title, "entity", title))
    if o["ceo"][i] >= 0:
        link, title = _ent(w, w.gid("person", o["ceo"][i]))
        a.field("ceo", link[0])
        tpl = pick(rng, ("The chief executive of {n} is {p}.", "{p} serves as chief executive."))
        a.fact(fill(tpl, n=name, p=link), ("ceo", title, "entity", title))
    if kind == "company":
        emp = o["employees"][i]
        a.field("employees", str(emp))
        a.fact(
            fill("{n} employs about {e} people.", n=noun, e=num(emp)),
            ("employees", str(emp), "number", None),
        )
    a.category({"company": "Companies", "university": "Universities", "band": "Musical groups"}[kind]
               + f" established in {y}")  # fmt: skip
    return a


def work(w: World, i: int, rng: random.Random) -> Article:
    """Render the ``i``-th creative work (novel, film or album)."""
    wk = w.cols["work"]
    gid = w.gid("work", i)
    name = w.naming.names[gid]
    kind = schema.WORK_KINDS[wk["kind"][i]]
    a = Article(rng, {"novel": "book", "film": "film", "album": "album"}[kind], name, name)
    noun = f"The {kind}"
    lead = fill("{n} is {k}.", n=f"'''{name}'''", k=a_an(kind))
    a.fact((lead[0], lead[1].replace("'''", "")), ("instance_of", kind, "text", None))
    a.section("Background" if kind != "film" else "Production")
    creator = wk["creator"][i]
    if creator >= 0:
        etype = "organisation" if kind == "album" else "person"
        rel = {"novel": "author", "film": "director", "album": "performer"}[kind]
        link, title = _ent(w, w.gid(etype, creator))
        a.field(rel, link[0])
        options = {
            "novel": ("{n} was written by {p}.", "{p} wrote {n}.", "The author of {n} is {p}."),
            "film": (
                "{n} was directed by {p}.",
                "{p} directed {n}.",
                "The director of {n} is {p}.",
            ),
            "album": ("{n} was recorded by {p}.", "{n} is an album by {p}."),
        }[kind]
        a.fact(fill(pick(rng, options), n=name, p=link), (rel, title, "entity", title))
    if wk["based_on"][i] >= 0:
        link, title = _ent(w, w.gid("work", wk["based_on"][i]))
        a.field("based_on", link[0])
        tpl = pick(
            rng, ("The film is based on the novel {w}.", "It is an adaptation of the novel {w}.")
        )
        a.fact(fill(tpl, w=link), ("based_on", title, "entity", title))
    genre_pool = {
        "novel": schema.NOVEL_GENRES,
        "film": schema.FILM_GENRES,
        "album": schema.MUSIC_GENRES,
    }
    genre = genre_pool[kind][wk["genre"][i]]
    a.field("genre", genre)
    tpl = {
        "novel": "{n} is a work of {g}.",
        "film": "{n} is {ag}.",
        "album": "{n} is {ag} record.",
    }[kind]
    a.fact(fill(tpl, n=noun, g=genre, ag=a_an(genre)), ("genre", genre, "text", None))
    _filler(a, "work", name, (rng.random() < 0.5))
    a.section("Release" if kind != "novel" else "Publication")
    y = wk["year"][i]
    a.field("publication_year", str(y))
    verb = "published" if kind == "novel" else "released"
    tpl = pick(rng, (f"{{n}} was first {verb} in {{y}}.", f"It was {verb} in {{y}}."))
    a.fact(fill(tpl, n=noun, y=str(y)), ("publication_year", str(y), "date", None))
    if wk["publisher"][i] >= 0:
        rel = {"novel": "publisher", "film": "production_company", "album": "record_label"}[kind]
        link, title = _ent(w, w.gid("organisation", wk["publisher"][i]))
        a.field(rel, link[0])
        options = {
            "novel": ("It was published by {o}.", "The publisher was {o}."),
            "film": ("The film was produced by {o}.", "{o} produced the film."),
            "album": ("It was issued on the {o} label.", "The record label was {o}."),
        }[kind]
        a.fact(fill(pick(rng, options), o=link), (rel, title, "entity", title))
    if wk["language"][i] >= 0:
        link, title = _ent(w, w.gid("language", wk["language"][i]))
        a.field("language", link[0])
        tpl = pick(rng, ("It was written in {l}.", "The original language is {l}.")) if kind == "novel" \
            else pick(rng, ("The film is in {l}.", "The original language of the film is {l}."))  # fmt: skip
        a.fact(fill(tpl, l=link), ("language", title, "entity", title))
    a.section("Reception")
    _filler(a, "work", name, 1 + (rng.random() < 0.5))
    a.category(f"{y} {kind}s")
    return a


def event(w: World, i: int, rng: random.Random) -> Article:
    """Render the ``i``-th event (battle, festival or treaty)."""
    e = w.cols["event"]
    gid = w.gid("event", i)
    name = w.naming.names[gid]
    kind = schema.EVENT_KINDS[e["kind"][i]]
    a = Article(
        rng,
        {"battle": "military conflict", "festival": "festival", "treaty": "treaty"}[kind],
        name,
        name,
    )
    link, title = _ent(w, w.gid("city", e["location"][i]))
    a.field("location", link[0])
    tpl = {
        "battle": "The {n} was a battle fought near {c}.",
        "festival": "The {n} is an annual festival held in {c}.",
        "treaty": "The {n} is a treaty signed in {c}.",
    }[kind]
    lead = fill(tpl, n=f"'''{name}'''", c=link)
    a.fact((lead[0], lead[1].replace("'''", "")), ("instance_of", kind, "text", None),
           ("location", title, "entity", title))  # fmt: skip
    a.section("Background")
    _filler(a, "event", name, 1 + (rng.random() < 0.5))
    a.section({"battle": "Battle", "festival": "History", "treaty": "Terms"}[kind])
    y, m, d = e["y"][i], e["m"][i], e["d"][i]
    a.field("date", f"{{{{start date|{y}|{m}|{d}}}}}")
    options = {
        "battle": ("The battle took place on {d}.", "The {n} was fought on {d}."),
        "festival": ("The first edition took place on {d}.", "The festival was first held on {d}."),
        "treaty": ("The treaty was signed on {d}.", "The {n} was concluded on {d}."),
    }[kind]
    a.fact(
        fill(pick(rng, options), n=name, d=date_text(y, m, d)),
        ("date", date_iso(y, m, d), "date", None),
    )
    parts = e["participants"][i]
    if parts:
        links = [_ent(w, w.gid("country", k)) for k in parts]
        a.field("participants", ", ".join(lk[0][0] for lk in links))
        tpl = (
            "The battle was fought between {p}."
            if kind == "battle"
            else "The signatories were {p}."
        )
        a.fact(fill(tpl, p=join_pieces([lk[0] for lk in links])),
               *[("participants", t, "entity", t) for _, t in links])  # fmt: skip
    if e["organiser"][i] >= 0:
        link, title = _ent(w, w.gid("organisation", e["organiser"][i]))
        a.field("organiser", link[0])
        tpl = pick(rng, ("The festival is organised by {o}.", "{o} organises the festival."))
        a.fact(fill(tpl, o=link), ("organiser", title, "entity", title))
    n = e["number"][i]
    if kind == "battle":
        a.field("casualties", str(n))
        a.fact(
            fill("The battle left about {x} casualties.", x=num(n)),
            ("casualties", str(n), "number", None),
        )
    elif kind == "festival":
        a.field("attendance", str(n))
        a.fact(fill("Recent editions have drawn about {x} visitors.", x=num(n)),
               ("attendance", str(n), "number", None))  # fmt: skip
    a.section("Aftermath" if kind != "festival" else "Programme")
    _filler(a, "event", name, 1)
    a.category(
        f"{y} {({'battle': 'battles', 'festival': 'festivals', 'treaty': 'treaties'})[kind]}"
    )
    return a


def river(w: World, i: int, rng: random.Random) -> Article:
    """Render the ``i``-th river."""
    r = w.cols["river"]
    name = w.naming.names[w.gid("river", i)]
    a = Article(rng, "river", name, name)
    lead = fill("The {n} is a river.", n=f"'''{name}'''")
    a.fact((lead[0], lead[1].replace("'''", "")), ("instance_of", "river", "text", None))
    a.section("Course")
    link, title = _ent(w, w.gid("country", r["source_country"][i]))
    a.field("source_country", link[0])
    tpl = pick(rng, ("The river rises in {k}.", "The source of the {n} lies in {k}."))
    a.fact(fill(tpl, n=name, k=link), ("source_country", title, "entity", title))
    links = [_ent(w, w.gid("city", c)) for c in r["flows_through"][i]]
    if links:
        a.field("flows_through", ", ".join(lk[0][0] for lk in links))
        tpl = pick(rng, ("The river flows through {c}.", "On its way it passes {c}."))
        a.fact(fill(tpl, c=join_pieces([lk[0] for lk in links])),
               *[("flows_through", t, "entity", t) for _, t in links])  # fmt: skip
    link, title = _ent(w, w.gid("city", r["mouth"][i]))
    a.field("mouth", link[0])
    tpl = pick(rng, ("It reaches the sea at {c}.", "The mouth of the {n} is at {c}."))
    a.fact(fill(tpl, n=name, c=link), ("mouth", title, "entity", title))
    length = r["length_km"][i]
    a.field("length_km", str(length))
    tpl = pick(rng, ("The {n} is {l} kilometres long.", "It has a length of {l} kilometres."))
    a.fact(fill(tpl, n=name, l=num(length)), ("length_km", str(length), "number", None))
    if r["tributary_of"][i] >= 0:
        link, title = _ent(w, w.gid("river", r["tributary_of"][i]))
        a.field("tributary_of", link[0])
        a.fact(
            fill("It is a tributary of the {r}.", r=link), ("tributary_of", title, "entity", title)
        )
    a.section("Ecology")
    _filler(a, "nature", name, 1 + (rng.random() < 0.5))
    a.category("Rivers")
    return a


def mountain(w: World, i: int, rng: random.Random) -> Article:
    """Render the ``i``-th mountain."""
    m = w.cols["mountain"]
    name = w.naming.names[w.gid("mountain", i)]
    a = Article(rng, "mountain", name, name)
    link, title = _ent(w, w.gid("country", m["country"][i]))
    a.field("located_in_country", link[0])
    lead = fill("{n} is a mountain in {k}.", n=f"'''{name}'''", k=link)
    a.fact((lead[0], lead[1].replace("'''", "")), ("instance_of", "mountain", "text", None),
           ("located_in_country", title, "entity", title))  # fmt: skip
    a.section("Geography")
    el = m["elevation_m"][i]
    a.field("elevation_m", str(el))
    tpl = pick(
        rng,
        (
            "{n} rises to {e} metres above sea level.",
            "The summit stands {e} metres above sea level.",
        ),
    )
    a.fact(fill(tpl, n=name, e=num(el)), ("elevation_m", str(el), "number", None))
    rng_name = w.naming.ranges[m["range"][i]]
    a.field("mountain_range", rng_name)
    a.fact(fill("It is part of the {r}.", r=rng_name), ("mountain_range", rng_name, "text", None))
    _filler(a, "nature", name, (rng.random() < 0.5))
    if m["climber"][i] >= 0:
        a.section("Climbing history")
        link, title = _ent(w, w.gid("person", m["climber"][i]))
        y = m["ascent_year"][i]
        a.field("first_ascent_by", link[0])
        a.field("first_ascent_year", str(y))
        tpl = pick(
            rng,
            (
                "The first ascent was made by {p} in {y}.",
                "{p} made the first ascent of {n} in {y}.",
            ),
        )
        a.fact(fill(tpl, n=name, p=link, y=str(y)), ("first_ascent_by", title, "entity", title),
               ("first_ascent_year", str(y), "date", None))  # fmt: skip
    a.category("Mountains")
    return a


def award(w: World, i: int, rng: random.Random) -> Article:
    """Render the ``i``-th award."""
    aw = w.cols["award"]
    name = w.naming.names[w.gid("award", i)]
    a = Article(rng, "award", name, name)
    fld = schema.AWARD_FIELDS[aw["field"][i]]
    a.field("field", fld)
    lead = fill("The {n} is an award for achievement in {f}.", n=f"'''{name}'''", f=fld)
    a.fact((lead[0], lead[1].replace("'''", "")), ("instance_of", "award", "text", None),
           ("field", fld, "text", None))  # fmt: skip
    a.section("History")
    link, title = _ent(w, w.gid("organisation", aw["presented_by"][i]))
    a.field("presented_by", link[0])
    tpl = pick(rng, ("The award is presented by {o}.", "It is awarded by {o}."))
    a.fact(fill(tpl, o=link), ("presented_by", title, "entity", title))
    y = aw["established_year"][i]
    a.field("established_year", str(y))
    tpl = pick(rng, ("The award was established in {y}.", "It was first presented in {y}."))
    a.fact(fill(tpl, y=str(y)), ("established_year", str(y), "date", None))
    _filler(a, "award", name, 1 + (rng.random() < 0.5))
    winners = w.members("people_by_award", i)[:6]
    if winners:
        a.section("Recipients")
        a.raw("\n".join(f"* {w.link(w.gid('person', p))[0]}" for p in winners))
    a.category("Awards established in " + str(y))
    return a


RENDERERS: dict[str, Callable[[World, int, random.Random], Article]] = {
    "person": person,
    "city": city,
    "country": country,
    "language": language,
    "organisation": organisation,
    "work": work,
    "event": event,
    "river": river,
    "mountain": mountain,
    "award": award,
}
