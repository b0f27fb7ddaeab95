"""Issue 40's batches of update cases: classes the rules of issue 12 missed, in four languages.

Each batch was written before any rule was changed for it and scored blind on the code of its day;
the first-try figures are in docs/decisions.md ("The update engine generalises"). A case's class
(`cls`) names what it tests, its language prefix ("de:", "es:", "fr:") where it is not English, so
the suite can report per class. The same shape as `update_cases.CASES` (see there).
"""

from __future__ import annotations

from collections.abc import Callable

from tests.memories.update_cases import Case


def _b(batch: str) -> Callable[..., Case]:
    def case(
        cls: str, name: str, earlier: str | tuple[str, ...], later: str, expect: str, others: int = 0
    ) -> Case:
        return Case(
            name,
            (earlier,) if isinstance(earlier, str) else earlier,
            later,
            expect,
            others,
            batch=batch,
            cls=cls,
        )

    return case


_a = _b("40a")

BATCH_40A: tuple[Case, ...] = (
    # --- a number changed by a verb of quantity ----------------------------------------------------
    _a("quantity", "salary up", "I earn 85k a year.", "My salary went up to 92k.", "update"),
    _a(
        "quantity",
        "waitlist down",
        "The waitlist for the clinic has 120 people on it.",
        "The clinic waitlist dropped to 40.",
        "update",
    ),
    _a("quantity", "weight down", "I weigh 82 kg.", "I'm down to 78 kg now.", "update"),
    _a(
        "quantity",
        "rent raised",
        "Our rent is $1,400 a month.",
        "The landlord raised our rent to $1,550.",
        "update",
    ),
    _a("quantity", "reports grew", "I have 3 direct reports.", "My team grew to 5 direct reports.", "update"),
    _a("quantity", "running cut", "I run about 20 km a week.", "I've cut back to 12 km a week.", "update"),
    # --- values the rules did not count as values --------------------------------------------------
    _a("value", "standup time", "Standup is at 10:00.", "Standup is now at 9:30.", "update"),
    _a(
        "value",
        "lesson weekday",
        "My piano lesson is on Thursdays.",
        "Piano lessons are on Mondays from now on.",
        "update",
    ),
    _a("value", "bike colour", "My bike is blue.", "I repainted my bike, it's green now.", "update"),
    _a("value", "car traded", "I drive a Honda Civic.", "I traded the Civic for a Mazda 3.", "update"),
    _a("value", "dentist", "My dentist is Dr. Patel.", "My new dentist is Dr. Okafor.", "update"),
    _a(
        "value",
        "website",
        "My website is https://ann.dev.",
        "My website moved to https://annlee.io.",
        "update",
    ),
    _a("value", "reach number", "My number is 555-0101.", "You can reach me at 555-0199 now.", "update"),
    # --- indirect corrections ----------------------------------------------------------------------
    _a(
        "correction",
        "flight time",
        "My flight lands at 6pm.",
        "Wait, no, I got that wrong: it lands at 8pm.",
        "update",
    ),
    _a(
        "correction",
        "sister birthday",
        "My sister's birthday is May 3.",
        "Let me correct that: my sister's birthday is May 13.",
        "update",
    ),
    _a(
        "correction",
        "conference city",
        "The conference is in Denver.",
        "I misspoke earlier. The conference is in Austin.",
        "update",
    ),
    _a(
        "correction",
        "landlord",
        "My landlord is called Mr. Green.",
        "Scratch that, my landlord is Mr. Brown.",
        "update",
    ),
    # --- a change inside a note of several statements ----------------------------------------------
    _a(
        "note",
        "number in a note",
        "My phone number is 555-0101.",
        "Back from the coast! Btw my new number is 555-0199. The recital is on Friday.",
        "update",
    ),
    _a(
        "note",
        "job in a note",
        "I work at Globex.",
        "Great weekend. Oh and I started at Initech on Monday. The kids loved the zoo.",
        "update",
    ),
    _a(
        "note",
        "move in a note",
        ("I live in Denver.", "I like hiking."),
        "Also, I moved to Boulder. Still hiking every weekend.",
        "update",
    ),
    # --- who a statement is about ------------------------------------------------------------------
    _a(
        "who",
        "aunt moved",
        ("My aunt lives in York.", "My uncle lives in Bath."),
        "My aunt moved to Leeds.",
        "update",
    ),
    _a(
        "who",
        "uncle stays",
        ("My uncle lives in Bath.", "My aunt lives in York."),
        "My aunt moved to Leeds.",
        "add",
        1,
    ),
    _a("who", "lab head", "Marco runs the lab.", "Marco retired, so Dana runs the lab now.", "update"),
    _a("who", "boss left", "My boss is Priya.", "Priya left; my boss is Tom now.", "update"),
    _a("who", "cousin job", "My brother works at Shell.", "My cousin started at BP.", "add"),
    # --- changes in the future ---------------------------------------------------------------------
    _a(
        "future",
        "new employer in March",
        "I work at Initech.",
        "Starting in March I'll be at Acme.",
        "update",
    ),
    # --- over-reach ----------------------------------------------------------------------------------
    _a(
        "overreach",
        "quit swimming",
        ("I swim on Tuesdays.", "I cycle to work."),
        "I quit swimming.",
        "update",
    ),
    _a(
        "overreach",
        "cycling stays",
        ("I cycle to work.", "I swim on Tuesdays."),
        "I quit swimming.",
        "add",
        1,
    ),
    _a(
        "overreach",
        "tennis not chess",
        ("I play tennis.", "I play chess."),
        "I don't play tennis anymore.",
        "update",
    ),
    # --- must not supersede --------------------------------------------------------------------------
    _a("add", "visit is not a move", "I live in Denver.", "I'm visiting Chicago next week.", "add"),
    _a("add", "second email", "My email is ann@work.com.", "My personal email is ann@home.org.", "add"),
    _a(
        "add",
        "dentist other day",
        "I went to the dentist on Monday.",
        "I went to the dentist on Friday.",
        "add",
    ),
    _a("add", "hypothetical job", "I work at Nike.", "If I worked at Adidas I'd earn more.", "add"),
    _a("add", "husband's film", "My favourite film is Alien.", "My husband's favourite film is Heat.", "add"),
    _a("add", "friend quoted", "I live in Leeds.", 'My friend said "I live in York now."', "add"),
    _a("add", "partner's pay", "I earn 85k a year.", "My partner earns 90k a year.", "add"),
    _a("add", "another meeting", "Standup is at 10:00.", "Retro is at 15:00.", "add"),
    _a("same", "train reworded", "I take the 8:15 train.", "I take the 8:15 train every weekday.", "same"),
    _a("same", "age reworded", "I'm 34.", "I am 34 years old.", "same"),
    _a(
        "add", "second instrument", "My daughter plays the violin.", "My daughter plays the cello too.", "add"
    ),
    _a(
        "add",
        "another appointment",
        "I have a meeting with Sara at 3pm.",
        "I have lunch with Omar at 1pm.",
        "add",
    ),
    _a("add", "pool hours", "My gym is open until 22:00.", "The pool closes at 20:00.", "add"),
    _a("add", "visit after move", "I moved to Berlin in 2019.", "I visited Munich in 2021.", "add"),
    # --- German --------------------------------------------------------------------------------------
    _a("de:move", "umzug", "Ich wohne in Hamburg.", "Ich bin nach München gezogen.", "update"),
    _a(
        "de:job",
        "neuer arbeitgeber",
        "Ich arbeite bei Siemens.",
        "Seit Januar arbeite ich bei Bosch.",
        "update",
    ),
    _a(
        "de:quantity",
        "gehalt",
        "Mein Gehalt beträgt 60.000 Euro.",
        "Mein Gehalt ist auf 65.000 Euro gestiegen.",
        "update",
    ),
    _a(
        "de:value",
        "telefonnummer",
        "Meine Telefonnummer ist 0171 234567.",
        "Meine neue Telefonnummer ist 0171 987654.",
        "update",
    ),
    _a("de:negation", "kein tee", "Ich trinke gern Tee.", "Ich trinke keinen Tee mehr.", "update"),
    _a("de:add", "bruder", "Meine Schwester wohnt in Köln.", "Mein Bruder wohnt in Bonn.", "add"),
    _a(
        "de:add",
        "konjunktiv",
        "Ich wohne in Hamburg.",
        "Wenn ich in Berlin wohnen würde, hätte ich mehr Freunde.",
        "add",
    ),
    _a("de:add", "auch klavier", "Ich spiele Gitarre.", "Ich spiele auch Klavier.", "add"),
    _a(
        "de:value",
        "meeting uhrzeit",
        "Das Meeting ist um 10 Uhr.",
        "Das Meeting ist jetzt um 11 Uhr.",
        "update",
    ),
    _a("de:same", "lebe wohne", "Ich wohne in Hamburg.", "Ich lebe in Hamburg.", "same"),
    # --- Spanish -------------------------------------------------------------------------------------
    _a("es:move", "mudanza", "Vivo en Madrid.", "Me mudé a Valencia.", "update"),
    _a("es:job", "nuevo trabajo", "Trabajo en Telefónica.", "Ahora trabajo en BBVA.", "update"),
    _a(
        "es:quantity",
        "sueldo",
        "Mi sueldo es de 30.000 euros.",
        "Me subieron el sueldo a 34.000 euros.",
        "update",
    ),
    _a("es:value", "correo", "Mi correo es ana@viejo.es.", "Mi nuevo correo es ana@nuevo.es.", "update"),
    _a("es:negation", "ya no cafe", "Me gusta el café.", "Ya no me gusta el café.", "update"),
    _a("es:add", "hermano", "Mi hermana vive en Sevilla.", "Mi hermano vive en Bilbao.", "add"),
    _a("es:add", "subjuntivo", "Vivo en Madrid.", "Si viviera en Barcelona, iría a la playa.", "add"),
    _a("es:add", "tambien gato", "Tengo un perro.", "También tengo un gato.", "add"),
    _a(
        "es:value",
        "yoga dia",
        "La clase de yoga es los martes.",
        "La clase de yoga ahora es los jueves.",
        "update",
    ),
    _a("es:same", "resido", "Vivo en Madrid.", "Resido en Madrid.", "same"),
    # --- French --------------------------------------------------------------------------------------
    _a("fr:move", "demenagement", "J'habite à Lyon.", "J'ai déménagé à Nantes.", "update"),
    _a(
        "fr:job",
        "nouvel employeur",
        "Je travaille chez Renault.",
        "Je travaille maintenant chez Airbus.",
        "update",
    ),
    _a(
        "fr:quantity",
        "salaire",
        "Mon salaire est de 40 000 euros.",
        "Mon salaire est passé à 45 000 euros.",
        "update",
    ),
    _a(
        "fr:value",
        "numero",
        "Mon numéro est le 06 12 34 56 78.",
        "Mon nouveau numéro est le 06 98 76 54 32.",
        "update",
    ),
    _a("fr:negation", "arrete de fumer", "Je fume.", "J'ai arrêté de fumer.", "update"),
    _a("fr:add", "frere", "Ma sœur habite à Lille.", "Mon frère habite à Rennes.", "add"),
    _a("fr:add", "conditionnel", "J'habite à Lyon.", "Si j'habitais à Paris, je sortirais plus.", "add"),
    _a("fr:add", "aussi chien", "J'ai un chat.", "J'ai aussi un chien.", "add"),
    _a(
        "fr:value",
        "danse jour",
        "Le cours de danse est le mercredi.",
        "Le cours de danse est désormais le vendredi.",
        "update",
    ),
    _a("fr:same", "vis habite", "Je vis à Lyon.", "J'habite à Lyon.", "same"),
)
