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


_b2 = _b("40b")

# Written after the first round of changes, before any change for it, and scored blind.
BATCH_40B: tuple[Case, ...] = (
    # --- quantities ----------------------------------------------------------------------------------
    _b2(
        "quantity",
        "team size",
        "Our team has 12 engineers.",
        "We hired two more, so the team is now 14 engineers.",
        "update",
    ),
    _b2(
        "quantity",
        "commute",
        "My commute takes 40 minutes.",
        "Since the new bus line my commute is down to 25 minutes.",
        "update",
    ),
    _b2(
        "quantity",
        "membership fee",
        "The monthly membership costs €30.",
        "They bumped the membership fee to €35 a month.",
        "update",
    ),
    _b2("quantity", "daughter turned", "My daughter is 6.", "My daughter just turned 7.", "update"),
    _b2(
        "quantity",
        "sleep",
        "I sleep about 6 hours a night.",
        "I've been getting 8 hours of sleep lately.",
        "update",
    ),
    _b2(
        "quantity",
        "followers",
        "I have 2,000 followers on my blog.",
        "My blog passed 3,500 followers.",
        "update",
    ),
    # --- typed values --------------------------------------------------------------------------------
    _b2(
        "value",
        "book club time",
        "The book club meets at 7pm.",
        "Book club starts at 6:30pm from now on.",
        "update",
    ),
    _b2("value", "trash day", "Trash pickup is on Wednesdays.", "Trash pickup moved to Thursdays.", "update"),
    _b2("value", "car sold", "My car is a grey Volvo.", "I sold the Volvo and bought a red Tesla.", "update"),
    _b2("value", "gp", "My GP is Dr. Mensah.", "I switched GPs, my doctor is now Dr. Alvarez.", "update"),
    _b2(
        "value",
        "office floor",
        "My office is on the 3rd floor.",
        "We moved offices; I'm on the 5th floor now.",
        "update",
    ),
    _b2(
        "value",
        "project site",
        "Our project site is https://old.example.com.",
        "The project site now lives at https://new.example.com.",
        "update",
    ),
    _b2(
        "value",
        "work phone",
        "My work phone is +44 20 7946 0000.",
        "My work phone changed to +44 20 7946 0999.",
        "update",
    ),
    _b2(
        "value", "anniversary", "My anniversary is June 2.", "Our anniversary is actually June 12.", "update"
    ),
    # --- indirect corrections ------------------------------------------------------------------------
    _b2(
        "correction",
        "wedding venue",
        "The wedding is in Napa.",
        "I mixed it up, the wedding is in Sonoma.",
        "update",
    ),
    _b2(
        "correction",
        "cousin spelling",
        "My cousin's name is Jana.",
        "Oops, my cousin is called Jena, I misspelled it.",
        "update",
    ),
    _b2(
        "correction",
        "deadline",
        "The deadline is March 3.",
        "Correction to what I said: the deadline is March 10.",
        "update",
    ),
    _b2(
        "correction",
        "internet price",
        "I pay 50 dollars for internet.",
        "Sorry, I meant 60 dollars for internet.",
        "update",
    ),
    # --- notes of several statements -----------------------------------------------------------------
    _b2(
        "note",
        "gym in a note",
        "My gym is FitLife.",
        "Long week. Also, I switched gyms to IronWorks. Dinner with Jo tomorrow.",
        "update",
    ),
    _b2(
        "note",
        "commute in a note",
        "I drive to work.",
        "By the way, I take the train to work now. The weather was awful.",
        "update",
    ),
    _b2(
        "note",
        "dentist in a note",
        ("My dentist is Dr. Lee.", "My barber is Sam."),
        "Quick update: my dentist is Dr. Kim now. Sam is still my barber.",
        "update",
    ),
    # --- who -----------------------------------------------------------------------------------------
    _b2(
        "who",
        "uncle moved",
        ("My uncle lives in Bath.", "My aunt lives in York."),
        "My uncle moved to Bristol.",
        "update",
    ),
    _b2("who", "sister's job", "My sister works at Pfizer.", "I started at Moderna.", "add"),
    _b2("who", "manager", "My manager is Olga.", "Olga got promoted, so my manager is Ben now.", "update"),
    _b2(
        "who",
        "other child's teacher",
        "My son's teacher is Mr. Hall.",
        "My daughter's teacher is Ms. Price.",
        "add",
    ),
    _b2(
        "who",
        "design lead",
        "Lena leads the design team.",
        "Lena handed the design team over to Raj, who leads it now.",
        "update",
    ),
    # --- the future ----------------------------------------------------------------------------------
    _b2("future", "moving next month", "I live in Austin.", "Next month I'm moving to Seattle.", "update"),
    _b2(
        "future",
        "new job in January",
        "I work at Stripe.",
        "From January I'll be working at Shopify.",
        "update",
    ),
    # --- over-reach ----------------------------------------------------------------------------------
    _b2("overreach", "gave up guitar", ("I play guitar.", "I play piano."), "I gave up guitar.", "update"),
    _b2("overreach", "piano stays", ("I play piano.", "I play guitar."), "I gave up guitar.", "add", 1),
    _b2(
        "overreach", "compound home", "I live in Lisbon and work at Fieldnote.", "I moved to Porto.", "update"
    ),
    _b2(
        "overreach",
        "compound job stays",
        "I work at Fieldnote and live in Lisbon.",
        "I moved to Porto.",
        "add",
        1,
    ),
    _b2(
        "overreach",
        "jazz not hip hop",
        ("I like jazz.", "I like hip hop."),
        "I don't like jazz anymore.",
        "update",
    ),
    # --- must not supersede --------------------------------------------------------------------------
    _b2("add", "brother same city", "I live in Denver.", "My brother lives in Denver too.", "add"),
    _b2("add", "wife's job", "I work at Acme.", "My wife works at Initech.", "add"),
    _b2("add", "bonus", "I earn 85k a year.", "My bonus was 5k this year.", "add"),
    _b2("add", "lunch time", "Standup is at 10:00.", "Lunch is at 12:30.", "add"),
    _b2("add", "two trips", "I went to Rome in May.", "I went to Rome in September.", "add"),
    _b2("add", "two runs", "I ran 5 km on Monday.", "I ran 8 km on Wednesday.", "add"),
    _b2("add", "what if", "I live in Leeds.", "What if I moved to Bristol?", "add"),
    _b2("add", "landlord's advice", "I live in Leeds.", "My landlord says I should move to Bristol.", "add"),
    _b2("add", "tom's colour", "My favourite colour is green.", "Tom's favourite colour is red.", "add"),
    _b2("add", "cat as well", "I have a dog.", "I have a cat as well.", "add"),
    _b2("add", "office number", "My phone number is 555-0101.", "My office number is 555-0300.", "add"),
    _b2("add", "earlier home", "I moved to Berlin in 2019.", "I lived in Paris before that.", "add"),
    _b2("add", "vegan in college", "I'm vegetarian.", "I was vegan for a year in college.", "add"),
    _b2("add", "friend's rent", "My rent is $1,400.", "My friend's rent is $2,000.", "add"),
    _b2(
        "add",
        "missed train",
        "I take the 8:15 train.",
        "Yesterday I missed the 8:15 train and took the 8:45.",
        "add",
    ),
    _b2("add", "sibling ages", "My brother is 30.", "My sister is 27.", "add"),
    _b2("same", "based in", "I live in Boston.", "I'm based in Boston.", "same"),
    _b2("same", "email me at", "My email is ann@old.com.", "You can email me at ann@old.com.", "same"),
    _b2("same", "employed by", "I work at Google.", "I'm employed by Google.", "same"),
    _b2("same", "standup happens", "Standup is at 10:00.", "Our standup happens at 10:00.", "same"),
    _b2("same", "got two cats", "I have two cats.", "I've got two cats.", "same"),
    # --- German --------------------------------------------------------------------------------------
    _b2(
        "de:move",
        "umgezogen",
        "Ich wohne in Köln.",
        "Wir sind letztes Jahr nach Düsseldorf umgezogen.",
        "update",
    ),
    _b2(
        "de:job",
        "gekuendigt",
        "Ich arbeite bei SAP.",
        "Ich habe bei SAP gekündigt und arbeite jetzt bei Zalando.",
        "update",
    ),
    _b2(
        "de:quantity",
        "miete",
        "Meine Miete beträgt 900 Euro.",
        "Die Miete wurde auf 950 Euro erhöht.",
        "update",
    ),
    _b2(
        "de:value",
        "training tag",
        "Das Training ist am Dienstag.",
        "Das Training ist ab sofort am Donnerstag.",
        "update",
    ),
    _b2("de:negation", "rauchen", "Ich rauche.", "Ich habe mit dem Rauchen aufgehört.", "update"),
    _b2("de:add", "mutter", "Mein Vater wohnt in Graz.", "Meine Mutter wohnt in Linz.", "add"),
    _b2("de:add", "ausserdem schach", "Ich spiele Tennis.", "Ich spiele außerdem Schach.", "add"),
    _b2("de:add", "vielleicht", "Ich wohne in Köln.", "Vielleicht ziehe ich irgendwann nach Bonn.", "add"),
    _b2(
        "de:value",
        "email",
        "Meine E-Mail ist max@alt.de.",
        "Meine neue E-Mail-Adresse ist max@neu.de.",
        "update",
    ),
    _b2("de:same", "angestellt", "Ich arbeite bei SAP.", "Ich bin bei SAP angestellt.", "same"),
    # --- Spanish -------------------------------------------------------------------------------------
    _b2("es:move", "ahora vivo", "Vivo en Sevilla.", "Ahora vivo en Málaga.", "update"),
    _b2("es:job", "deje iberia", "Trabajo en Iberia.", "Dejé Iberia y ahora trabajo en Vueling.", "update"),
    _b2("es:quantity", "peso", "Peso 80 kilos.", "Bajé a 75 kilos.", "update"),
    _b2(
        "es:correction",
        "cumpleanos",
        "Mi cumpleaños es el 3 de mayo.",
        "Perdón, mi cumpleaños es el 13 de mayo.",
        "update",
    ),
    _b2("es:value", "reunion hora", "La reunión es a las 10.", "La reunión ahora es a las 11.", "update"),
    _b2("es:add", "madre", "Mi padre vive en Lima.", "Mi madre vive en Cusco.", "add"),
    _b2("es:add", "tambien tenis", "Juego al fútbol.", "También juego al tenis.", "add"),
    _b2("es:add", "quizas", "Vivo en Sevilla.", "Quizás me mude a Madrid algún día.", "add"),
    _b2("es:quantity", "hijos", "Tengo dos hijos.", "Tengo tres hijos ahora.", "update"),
    _b2("es:same", "empleado", "Trabajo en Iberia.", "Estoy empleado en Iberia.", "same"),
    # --- French --------------------------------------------------------------------------------------
    _b2("fr:move", "nous habitons", "J'habite à Bordeaux.", "Nous habitons maintenant à Toulouse.", "update"),
    _b2(
        "fr:job",
        "quitte orange",
        "Je travaille chez Orange.",
        "J'ai quitté Orange, je travaille chez Free.",
        "update",
    ),
    _b2("fr:quantity", "loyer", "Mon loyer est de 700 euros.", "Mon loyer a augmenté à 750 euros.", "update"),
    _b2("fr:value", "reunion heure", "La réunion est à 9h.", "La réunion est maintenant à 10h.", "update"),
    _b2("fr:negation", "plus de cafe", "Je bois du café.", "Je ne bois plus de café.", "update"),
    _b2("fr:add", "pere", "Ma mère habite à Nice.", "Mon père habite à Metz.", "add"),
    _b2("fr:add", "aussi guitare", "Je joue du piano.", "Je joue aussi de la guitare.", "add"),
    _b2(
        "fr:add", "peut-etre", "J'habite à Bordeaux.", "Peut-être que je déménagerai à Lille un jour.", "add"
    ),
    _b2(
        "fr:value",
        "adresse email",
        "Mon adresse e-mail est luc@ancien.fr.",
        "Ma nouvelle adresse e-mail est luc@nouveau.fr.",
        "update",
    ),
    _b2("fr:same", "employe", "Je travaille chez Orange.", "Je suis employé chez Orange.", "same"),
)


_b3 = _b("40c")

# Written after the last change of the session, scored blind, and not fitted: how the rules meet
# phrasings nobody here tuned them on.
BATCH_40C: tuple[Case, ...] = (
    _b3(
        "quantity",
        "mortgage rate",
        "Our mortgage rate is 4.1%.",
        "The bank cut our mortgage rate to 3.6%.",
        "update",
    ),
    _b3(
        "quantity",
        "step goal",
        "My daily step goal is 8,000 steps.",
        "I raised my daily step goal to 10,000 steps.",
        "update",
    ),
    _b3(
        "quantity",
        "price per kilo",
        "Coffee beans cost me €18 per kilo.",
        "Coffee beans went up to €21 per kilo.",
        "update",
    ),
    _b3(
        "value",
        "parking spot",
        "My parking spot is B12.",
        "They reassigned me, my parking spot is now C4.",
        "update",
    ),
    _b3("value", "lunch hour", "I take lunch at 12:30.", "These days I take lunch at 13:15.", "update"),
    _b3(
        "value", "swim day", "Swim practice is on Saturdays.", "Swim practice switched to Sundays.", "update"
    ),
    _b3(
        "value",
        "therapist",
        "My therapist is Dr. Ruiz.",
        "I see Dr. Brandt now instead of Dr. Ruiz.",
        "update",
    ),
    _b3(
        "correction",
        "train platform",
        "My train leaves from platform 4.",
        "No wait, it leaves from platform 7.",
        "update",
    ),
    _b3(
        "correction",
        "hotel name",
        "We're staying at the Hotel Astoria.",
        "Correction: we're staying at the Hotel Bristol.",
        "update",
    ),
    _b3(
        "note",
        "email in a note",
        "My email is kim@oldmail.com.",
        "Busy day! By the way, my email is now kim@newmail.com. The plumber comes Tuesday.",
        "update",
    ),
    _b3(
        "who",
        "grandma moved",
        ("My grandma lives in Dover.", "My grandpa lives in Hull."),
        "My grandma moved to Kent.",
        "update",
    ),
    _b3(
        "who",
        "grandpa stays",
        ("My grandpa lives in Hull.", "My grandma lives in Dover."),
        "My grandma moved to Kent.",
        "add",
        1,
    ),
    _b3(
        "who", "friend's phone", "My phone number is 555-0101.", "My friend Ola's number is 555-0777.", "add"
    ),
    _b3(
        "overreach",
        "quit running",
        ("I run on weekdays.", "I lift weights on Sundays."),
        "I quit running.",
        "update",
    ),
    _b3(
        "overreach",
        "weights stay",
        ("I lift weights on Sundays.", "I run on weekdays."),
        "I quit running.",
        "add",
        1,
    ),
    _b3("add", "second language", "I speak French.", "I speak Italian too.", "add"),
    _b3("add", "trip plan", "I live in Oslo.", "I'm flying to Rome for a week in May.", "add"),
    _b3(
        "add", "two reminders", "Remind me to call Ana on Friday.", "Remind me to call Leo on Friday.", "add"
    ),
    _b3(
        "add",
        "hypothetical salary",
        "I earn 70k a year.",
        "If I took the Berlin offer I would earn 80k.",
        "add",
    ),
    _b3("add", "colleague's car", "I drive a Skoda.", "My colleague drives a Tesla.", "add"),
    _b3("add", "past job", "I work at Lidl.", "Before Lidl I worked at Aldi for two years.", "add"),
    _b3("same", "reworded train", "My train leaves at 7:10.", "The train I take leaves at 7:10.", "same"),
    _b3("same", "reworded salary", "I earn 70k a year.", "My salary is 70k a year.", "same"),
    _b3("de:move", "neue stadt", "Ich lebe in Leipzig.", "Seit März wohne ich in Dresden.", "update"),
    _b3(
        "de:value",
        "zahnarzt termin",
        "Mein Zahnarzttermin ist am Montag.",
        "Mein Zahnarzttermin wurde auf Mittwoch verschoben.",
        "update",
    ),
    _b3("de:add", "schwester job", "Ich arbeite bei BASF.", "Meine Schwester arbeitet bei Bayer.", "add"),
    _b3("de:negation", "kein fleisch", "Ich esse Fleisch.", "Ich esse kein Fleisch mehr.", "update"),
    _b3("es:move", "me fui", "Vivo en Bilbao.", "Me mudé a Santander el mes pasado.", "update"),
    _b3(
        "es:value",
        "telefono nuevo",
        "Mi teléfono es 612 345 678.",
        "Mi nuevo teléfono es 699 111 222.",
        "update",
    ),
    _b3("es:add", "amigo vive", "Vivo en Bilbao.", "Mi amigo vive en Santander.", "add"),
    _b3("es:negation", "ya no fumo", "Fumo.", "Ya no fumo.", "update"),
    _b3(
        "fr:move",
        "installe",
        "J'habite à Lille.",
        "Je me suis installé à Rouen, j'ai déménagé en juin.",
        "update",
    ),
    _b3(
        "fr:value",
        "cours jour",
        "Mon cours de yoga est le lundi.",
        "Mon cours de yoga a changé, c'est le jeudi maintenant.",
        "update",
    ),
    _b3("fr:add", "voisin", "J'habite à Lille.", "Mon voisin habite à Lens.", "add"),
    _b3("fr:quantity", "poids", "Je pèse 70 kg.", "Je pèse maintenant 66 kg.", "update"),
    _b3("fr:add", "aussi anglais", "Je parle espagnol.", "Je parle aussi anglais.", "add"),
)


_f = _b("40f")

# The outside test's defects (issue 40 follow-up), in phrasings of our own: a statement that says a
# value is unchanged confirms it ("same"), never replaces it; and a compound of two verb-initial
# clauses is two facts, so that ending one leaves the other current.
BATCH_40F: tuple[Case, ...] = (
    _f("continuity", "membership unchanged", "My gym membership costs $45 a month.",
       "The gym membership price hasn't changed.", "same"),
    _f("continuity", "commute unchanged", "My commute takes 40 minutes.", "My commute is unchanged.", "same"),
    _f("de:continuity", "miete gleich", "Meine Miete beträgt 950 Euro im Monat.", "Die Miete bleibt gleich.",
       "same"),
    _f("es:continuity", "alquiler igual", "Mi alquiler es de 700 euros al mes.", "El alquiler sigue igual.",
       "same"),
    _f("fr:continuity", "loyer inchangé", "Mon loyer est de 850 euros par mois.", "Le loyer reste le même.",
       "same"),
    _f("es:pro-drop", "violin ends, running stays", "Corro por las mañanas y toco el violín.",
       "Ya no toco el violín.", "add", 1),
    _f("es:pro-drop", "pool ends, german stays", "Estudio alemán los martes y nado en la piscina.",
       "Ya no nado en la piscina.", "add", 1),
    _f("de:pro-drop", "chess ends, reading stays", "Ich lese gern Krimis und spiele Schach im Verein.",
       "Ich spiele kein Schach mehr.", "add", 1),
    _f("fr:pro-drop", "piano ends, running stays", "Je cours le matin et joue du piano le soir.",
       "Je ne joue plus du piano.", "add", 1),
)  # fmt: skip


_g = _b("40g")

# Found by CI after the merge (tests/memories/test_batch_ingest.py, "Locker n holds my ..."): a number
# that labels a thing ("locker 2", "room 12") and a different thing beside it is another thing, never
# another value of the first; written after the fix, so its figure is not a blind one.
BATCH_40G: tuple[Case, ...] = (
    _g("label", "bays side by side", "Bay 3 stores my kayak.", "Bay 5 stores my paddleboard.", "add"),
    _g("label", "rooms side by side", "Room 12 is where I keep my files.",
       "Room 14 is where I keep the bikes.", "add"),
    _g("de:label", "fächer", "Fach 2 enthält meine Steuerunterlagen.",
       "Fach 4 enthält meine Zeugnisse.", "add"),
    _g("es:label", "taquillas", "La taquilla 7 guarda mi raqueta.",
       "La taquilla 9 guarda mis zapatillas.", "add"),
    _g("label", "a locker that changes", "My locker is number 12.", "My locker is number 15 now.", "update"),
)  # fmt: skip


_h = _b("40h")

# Indirect corrections, quantity verbs and their must-nots (issue 40's follow-up), in phrasings of
# our own (not the outside probe's). Written and scored blind before any rule change for them; the
# first-try figure is in docs/decisions.md.
BATCH_40H: tuple[Case, ...] = (
    # --- indirect corrections -----------------------------------------------------------------------
    _h("indirect", "wait no dinner", "Dinner with the Hendersons is at 7pm on Saturday.",
       "Wait, no, dinner with the Hendersons is at 8pm.", "update"),
    _h("indirect", "let me correct", "My flight to Oslo leaves at 6:15.",
       "Let me correct that: the Oslo flight leaves at 7:45.", "update"),
    _h("indirect", "got it wrong", "The kids' school starts at 8:10.",
       "I got that wrong, school starts at 8:25.", "update"),
    _h("indirect", "no subject, not x", "My locker code is 4471.", "No, it's 4417 not 4471.", "update"),
    _h("indirect", "no subject, meant", "The plumber is coming on Tuesday.", "Sorry, I meant Wednesday.",
       "update"),
    _h("indirect", "two sentences", "The recital starts at 5pm.", "That was wrong. It starts at 6pm.",
       "update"),
    _h("indirect", "two sentences, pronoun", "My nephew's birthday is on May 9.",
       "Hmm, I checked the calendar. His birthday is actually May 19.", "update"),
    _h("indirect", "correction about someone else", "My brother's flight lands at 3pm.",
       "Wait, no, my flight lands at 5pm.", "add"),
    _h("indirect", "correction of another thing", "The team offsite is on June 4.",
       "Correction to what I said about the budget: it's 12k.", "add"),
    _h("de:indirect", "moment nein", "Mein Zahnarzttermin ist am Montag.",
       "Moment, nein, der Termin ist am Mittwoch.", "update"),
    _h("de:indirect", "korrektur ohne subjekt", "Die Konferenz beginnt um 9 Uhr.",
       "Korrektur: es ist 10 Uhr, nicht 9 Uhr.", "update"),
    _h("es:indirect", "olvida lo que dije", "La reunión con el banco es el lunes.",
       "Olvida lo que dije, es el miércoles.", "update"),
    _h("es:indirect", "me equivoqué", "Mi vuelo sale a las 10:30.",
       "Me equivoqué: el vuelo sale a las 11:30.",
       "update"),
    _h("es:indirect", "corrección de otra persona", "Mi hermana vive en Sevilla.",
       "Olvida eso, mi hermano vive en Cádiz.", "add"),
    _h("fr:indirect", "attends non", "Le rendez-vous chez le garagiste est jeudi.",
       "Attends, non, c'est vendredi.", "update"),
    _h("fr:indirect", "je me suis trompé", "Ma réunion est à 14h.",
       "Je me suis trompé, la réunion est à 15h.",
       "update"),
    # --- a number changed by a verb of quantity ------------------------------------------------------
    _h("quantity", "jumped", "My commute costs $90 a month.", "My commute cost jumped to $120 a month.",
       "update"),
    _h("quantity", "bumped up", "I sleep about 6 hours a night.",
       "I've bumped my sleep up to 8 hours a night.",
       "update"),
    _h("quantity", "climbed", "Our newsletter has 2,000 subscribers.",
       "The newsletter climbed to 3,500 subscribers.", "update"),
    _h("quantity", "upped that", "I read 10 books a year.", "I've upped that to 25 books a year.", "update"),
    _h("quantity", "fell", "The gym charges me $50 a month.", "The gym fee fell to $35.", "update"),
    _h("quantity", "someone else's raise", "I earn 85k a year.", "My sister's salary went up to 90k.", "add"),
    _h("quantity", "another activity", "I run 20 km a week.", "I cycle 60 km a week.", "add"),
    _h("de:quantity", "gestiegen", "Ich verdiene 4.000 Euro im Monat.",
       "Mein Gehalt ist auf 4.500 Euro gestiegen.",
       "update"),
    _h("de:quantity", "verkürzt", "Mein Arbeitsweg dauert 50 Minuten.",
       "Mein Arbeitsweg hat sich auf 30 Minuten verkürzt.", "update"),
    _h("de:quantity", "another sport", "Ich laufe 10 km pro Woche.", "Ich schwimme 2 km pro Woche.", "add"),
    _h("es:quantity", "subió", "Pago 600 euros de alquiler.", "El alquiler subió a 680 euros.", "update"),
    _h("es:quantity", "el doble", "Camino 5.000 pasos al día.",
       "Ahora camino el doble, unos 10.000 pasos al día.",
       "update"),
    _h("fr:quantity", "est passé à", "Mon abonnement coûte 30 euros.", "Mon abonnement est passé à 38 euros.",
       "update"),
    _h("fr:quantity", "augmenté", "Je dors 6 heures par nuit.",
       "J'ai augmenté mon sommeil à 8 heures par nuit.",
       "update"),
    _h("fr:quantity", "frère", "Je gagne 3000 euros par mois.",
       "Mon frère gagne 4000 euros par mois.", "add"),
)  # fmt: skip

# Batch 40i: changes that start in the future (issue 40, section 2), and what must not be read as one.
# Written before the rule for future changes, scored blind (docs/decisions.md).
_i = _b("40i")

BATCH_40I: tuple[Case, ...] = (
    _i("future", "employer next month", "I work at Globex.",
       "From next month I'll be working for Umbrella Corp.", "update"),
    _i("future", "move in June", "I live in Denver.", "In June we're moving to Portland.", "update"),
    _i("future", "new manager Monday", "My manager is Karen.", "Starting Monday my manager will be Luis.",
       "update"),
    _i("future", "office moves", "Our office is on Main Street.",
       "From April the office will be on Harbor Road.", "update"),
    _i("future", "rent from January", "My rent is $1,200 a month.",
       "Starting in January my rent goes up to $1,300.", "update"),
    _i("future", "yoga day", "Yoga class is on Wednesdays.",
       "From next week yoga moves to Fridays.", "update"),
    _i("future", "promotion in July", "I'm a junior developer at Kite.",
       "I got promoted: from July I'll be a senior developer at Kite.", "update"),
    _i("de:future", "Umzug im Mai", "Ich wohne in Köln.", "Ab Mai wohne ich in Hamburg.", "update"),
    _i("es:future", "trabajo en septiembre", "Trabajo en Telefónica.",
       "A partir de septiembre trabajaré en Indra.", "update"),
    _i("fr:future", "déménagement en octobre", "J'habite à Lyon.",
       "À partir d'octobre, j'habiterai à Nantes.", "update"),
    # Must not: a visit, a maybe, someone else, a condition, an extra session, a trip.
    _i("future", "a visit", "I live in Denver.", "Next month I'm visiting my sister in Portland.", "add"),
    _i("future", "a maybe", "I work at Globex.", "Maybe next year I'll look for a job at Umbrella.", "add"),
    _i("future", "the husband's job", "I work at Globex.",
       "My husband will start at Umbrella in March.", "add"),
    _i("future", "a condition", "I live in Denver.",
       "If the offer comes through, we might move to Portland in June.", "add"),
    _i("future", "an extra class", "Yoga class is on Wednesdays.",
       "Next week there's an extra yoga class on Saturday.", "add"),
    _i("de:future", "Dienstreise", "Ich arbeite bei Siemens.",
       "Nächsten Monat habe ich eine Dienstreise nach Berlin.", "add"),
)  # fmt: skip

# Batch 40j: a fresh sample across the classes, in four languages, written after 40i's rules and
# before any change for it, scored blind (docs/decisions.md).
_j = _b("40j")

BATCH_40J: tuple[Case, ...] = (
    _j("quantity", "subscribers halved", "The podcast has 800 listeners.",
       "The podcast is down to 400 listeners.", "update"),
    _j("quantity", "price hike", "Netflix costs me $15 a month.",
       "Netflix raised its price, I now pay $18 a month.", "update"),
    _j("value", "meeting room", "The book club meets in room 204.",
       "The book club meets in room 310 now.", "update"),
    _j("value", "new plate", "My licence plate is KX-2231.", "Got new plates: KX-9904.", "update"),
    _j("value", "gym time", "I go to the gym at 7am.", "I've moved my gym sessions to 6pm.", "update"),
    _j("correction", "misremembered", "My niece is 9.", "Actually I misremembered, my niece is 10.",
       "update"),
    _j("correction", "typo", "My postcode is 90210.", "Typo earlier, the postcode is 90211.", "update"),
    _j("who", "new landlord", "Our landlord is Mr. Grant.",
       "The building was sold and our landlord is now Ms. Ito.", "update"),
    _j("who", "friend's city", "I live in Leeds.", "My friend Tom lives in York.", "add"),
    _j("note", "busy note", "My locker code is 4512.",
       "Long day. The new locker code is 7730. Also picked up groceries.", "update"),
    _j("future", "contract from May", "My contract is 30 hours a week.",
       "From May my contract goes up to 38 hours a week.", "update"),
    _j("must-not", "a past trip", "I live in Oslo.", "Last summer I spent two weeks in Rome.", "add"),
    _j("must-not", "a wish", "I drive a Golf.", "I'd love to drive a Tesla one day.", "add"),
    _j("must-not", "a quote", "My favourite film is Alien.",
       "My brother says his favourite film is Heat.", "add"),
    _j("same", "reworded", "I'm allergic to peanuts.", "Peanuts give me an allergic reaction.", "same"),
    _j("de:value", "neue Nummer", "Meine Handynummer ist 0170 1234567.",
       "Meine neue Handynummer ist 0171 7654321.", "update"),
    _j("de:correction", "korrigiert", "Der Termin ist am Dienstag.",
       "Korrektur: der Termin ist am Mittwoch.", "update"),
    _j("es:value", "nuevo coche", "Tengo un Seat Ibiza.", "Vendí el Seat y ahora tengo un Toyota Corolla.",
       "update"),
    _j("es:must-not", "la hermana", "Vivo en Valencia.", "Mi hermana vive en Bilbao.", "add"),
    _j("fr:quantity", "loyer baisse", "Mon loyer est de 900 euros.", "Mon loyer a baissé à 850 euros.",
       "update"),
    _j("fr:correction", "je me suis trompé", "Mon vol part à 7h.", "Je me suis trompé, mon vol part à 9h.",
       "update"),
)  # fmt: skip

# Batch 52a: a change of job said with the role before the employer ("I'm now a data engineer at
# Solvia"), the way a newcomer said it in a walk of the service, and what must not be read as one (a
# regular, a member, a volunteer, another person, a past job). Written before any rule for it, scored
# blind (docs/decisions.md, "A job said as a role at an employer").
_k = _b("52a")

BATCH_52A: tuple[Case, ...] = (
    _k("role", "now a role at", "I work at Freightline as a logistics analyst.",
       "I'm now a data engineer at Solvia.", "update"),
    _k("role", "left and now a role", "I work for Deloitte.",
       "Correction: I left Deloitte in October, I'm now a product manager at Lumen.", "update"),
    _k("role", "same role, new place", "I'm a nurse at St. Mary's Hospital.", "I'm a nurse at Kaiser now.",
       "update"),
    _k("role", "teach at", "I'm a teacher at Lincoln High.", "These days I teach at Roosevelt Middle School.",
       "update"),
    _k("role", "switched jobs", "I work as a barista at Blue Bottle.",
       "I switched jobs, I'm a barista at Ritual Coffee now.", "update"),
    _k("role", "moved over", "I'm an accountant at KPMG.",
       "I moved over to EY last month, same job title.", "update"),
    _k("role", "with them now", "I'm employed by Siemens.", "I'm with Bosch now, in their e-bike division.",
       "update"),
    _k("role", "inside a note", "I work at Freightline as a logistics analyst. My commute is 40 minutes.",
       "Quick update. I left Freightline in October and I'm now a data engineer at Solvia. "
       "The commute is shorter too.", "update"),
    _k("role", "sister's job", "My sister works at Google.", "My sister is a nurse at Kaiser now.", "update"),
    _k("role", "same, reworded", "I'm a data engineer at Solvia.", "I work at Solvia as a data engineer.",
       "same"),
    _k("must-not", "a regular", "I work at Freightline.", "I'm a regular at Blue Bottle on weekends.", "add"),
    _k("must-not", "a member", "I work at Acme.", "I'm a member at the climbing gym downtown.", "add"),
    _k("must-not", "a volunteer", "I work at the city hospital.",
       "I'm a volunteer at the animal shelter on Saturdays.", "add"),
    _k("must-not", "the wife's job", "I'm a data engineer at Solvia.",
       "My wife is a teacher at Lincoln High.", "add"),
    _k("must-not", "an interview", "I work at Google.", "I had an interview at Meta yesterday.", "add"),
    _k("must-not", "a past job", "I'm a nurse at Kaiser.", "I was a nurse at St. Mary's before this.", "add"),
    _k("must-not", "a fan", "I work at Google.", "I'm a huge fan of the Warriors.", "add"),
    _k("must-not", "the brother's job", "My sister works at Google.", "My brother is a nurse at Kaiser.",
       "add"),
    _k("de:role", "jetzt Ingenieurin", "Ich arbeite bei Siemens.", "Ich bin jetzt Ingenieurin bei Bosch.",
       "update"),
    _k("de:must-not", "Mitglied", "Ich arbeite bei Siemens.", "Ich bin Mitglied im Sportverein.", "add"),
    _k("es:role", "ahora diseñadora", "Trabajo en Telefónica.", "Ahora soy diseñadora en Inditex.", "update"),
    _k("es:must-not", "socio", "Trabajo en Telefónica.", "Soy socio del club de tenis.", "add"),
    _k("fr:role", "maintenant comptable", "Je travaille chez Orange.",
       "Je suis maintenant comptable chez Total.", "update"),
    _k("fr:must-not", "bénévole", "Je travaille chez Orange.", "Je suis bénévole aux Restos du Cœur.", "add"),
)  # fmt: skip

# Batch 52b: an attack on batch 52a's rule (another named employer replaces the earlier one whatever
# the meaning) and on slot_of's "I'm a <role> at <Name>", written by a helper who did not build
# them, before running anything. Mostly "must-not" cases that try to make the rule hide a true fact
# (a second job without "also", a client, a volunteer or member role of the lexicon's roles, a former
# job said without the lexicon's past words, a hypothetical or a question, another person or a
# pronoun taken for the speaker, a name after "at" that is no employer: a feast, a city, a person,
# a service booked), a few controls that hold by the code's own guards, and "update" cases the rule
# was suspected to miss ("atk:miss": an employer in lower case, after an article, a role not listed).
_l = _b("52b")

BATCH_52B: tuple[Case, ...] = (
    # --- a second job, said without "also" ---------------------------------------------------------
    _l("atk:second-job", "weekend barista", "I work at Google.", "On weekends I'm a barista at Blue Bottle.",
       "add"),
    _l("atk:second-job", "moonlight", "I'm an engineer at Stripe.",
       "I moonlight as a bartender at The Crow Bar.",
       "add"),
    _l("atk:second-job", "evenings tutor", "I work at Freightline.", "Evenings I tutor at Kumon.", "add"),
    _l("atk:also-slot", "also a tutor", "I work at Google.", "I'm also a tutor at Kumon.", "add"),
    _l("atk:also-slot", "also work", "I work at Google.", "I also work at Kumon on Saturdays.", "add"),
    # --- a client, not an employer -----------------------------------------------------------------
    _l("atk:client", "consultant for Acme", "I'm a consultant at Deloitte.",
       "I'm a consultant for Acme this quarter.", "add"),
    _l("atk:client", "tutor for Emma", "I teach at Lincoln High.",
       "I'm a tutor for Emma on Thursdays.", "add"),
    # --- a volunteer or member role that is in the roles list --------------------------------------
    _l("atk:volunteer", "volunteer coach", "I work at Google.",
       "I'm a volunteer coach at Riverside FC.", "add"),
    _l("atk:volunteer", "volunteer tutor", "I work at Freightline.",
       "I volunteer as a tutor at Reading Partners.", "add"),
    _l("atk:volunteer", "Sunday school", "I work at Google.", "I'm a Sunday school teacher at St. Mark's.",
       "add"),
    _l("atk:member", "club officer", "I work at Acme.", "I'm a club officer at Toastmasters.", "add"),
    # --- a former job, without the lexicon's past words --------------------------------------------
    _l("atk:former", "former nurse", "I work at Google.", "I'm a former nurse at Kaiser.", "add"),
    _l("atk:former", "five years as", "I work at Google.", "I spent five years as a nurse at Kaiser.", "add"),
    _l("atk:former", "started my career", "I'm an engineer at Stripe.",
       "I started my career as a cashier at Walmart.", "add"),
    _l("atk:former", "first job", "I work at Google.", "My first job: cashier at Walmart.", "add"),
    # --- a hypothetical, a wish, an offer ----------------------------------------------------------
    _l("atk:hypothetical", "I'd be", "I work at Google.", "In another life I'd be a chef at Noma.", "add"),
    _l("atk:hypothetical", "if I were (control)", "I work at Google.",
       "If I were a nurse at Kaiser I'd have better hours.", "add"),
    _l("atk:aspiration", "applied", "I work at Google.", "I applied to be an engineer at Stripe.", "add"),
    _l("atk:aspiration", "goal", "I work at Freightline.", "My goal is to become a pilot at Delta.", "add"),
    _l("atk:aspiration", "turned down", "I work at Google.",
       "I turned down an offer to be an engineer at Stripe.", "add"),
    # --- a question ----------------------------------------------------------------------------------
    _l("atk:question", "no question mark", "I work at Google.",
       "Am I still listed as a nurse at Kaiser", "add"),
    _l("atk:question", "question mark (control)", "I work at Google.",
       "Am I still a nurse at Kaiser?", "add"),
    # --- someone else with a role ------------------------------------------------------------------
    _l("atk:other-person", "older sister", "I work at Google.",
       "My older sister is a nurse at Kaiser.", "add"),
    _l("atk:other-person", "best friend", "I'm an engineer at Stripe.",
       "My best friend is a designer at Figma.",
       "add"),
    _l("atk:other-person", "a colleague of mine", "I work at Google.",
       "A colleague of mine is a nurse at Kaiser.",
       "add"),
    _l("atk:other-person", "my colleague (control)", "I work at Google.",
       "My colleague is a nurse at Kaiser.",
       "add"),
    _l("atk:pronoun", "she's", "I work at Google.", "She's a nurse at Kaiser now.", "add"),
    _l("atk:pronoun", "he works", "I'm a nurse at Kaiser.", "He works at Google.", "add"),
    # --- a capitalised name after "at" that is no employer -----------------------------------------
    _l("atk:not-employer", "cashier at Christmas", "I work at Home Depot.",
       "I work as a cashier at Christmas.",
       "add"),
    _l("atk:not-employer", "work at Christmas", "I work at Google.", "I have to work at Christmas this year.",
       "add"),
    _l("atk:place-name", "Boston's biggest", "I work at Mass General.",
       "I'm a nurse at Boston's biggest hospital.",
       "add"),
    _l("atk:place-name", "Lake Tahoe", "I work at Google.",
       "Every summer I'm a lifeguard at Lake Tahoe.", "add"),
    _l("atk:time", "start at 9 (control)", "I'm a teacher at Lincoln High.", "I start work at 9.", "add"),
    _l("atk:not-a-job", "dating a lawyer", "I work at Google.", "I'm dating a lawyer at Kirkland.", "add"),
    _l("atk:not-a-job", "therapist", "I work at Google.", "I see a therapist at Kaiser every week.", "add"),
    _l("atk:not-a-job", "great doctor", "I work at Google.", "I have a great doctor at Kaiser.", "add"),
    _l("atk:not-a-job", "chef at Noma", "I work at Google.", "The chef at Noma is a genius.", "add"),
    _l("atk:service", "plumber for Monday", "I work at Google.", "I need a plumber for Monday.", "add"),
    _l("atk:service", "company for Easter", "I work at Google.", "We have company for Easter.", "add"),
    _l("atk:gig", "wedding photographer", "I work at Google.",
       "I'm the photographer at Anna's wedding on Saturday.",
       "add"),
    # --- German: every noun capitalised, "bei" before a place or an occasion ----------------------
    _l("de:atk:not-employer", "Kellnerin bei Hochzeiten", "Ich arbeite bei Siemens.",
       "Ich bin Kellnerin bei Hochzeiten.", "add"),
    _l("de:atk:former", "Perfekt", "Ich arbeite bei Siemens.",
       "Ich habe drei Jahre als Kellnerin bei Hilton gearbeitet.", "add"),
    _l("de:atk:other-person", "Mitbewohnerin", "Ich arbeite bei Siemens.",
       "Meine Mitbewohnerin ist Ingenieurin bei Bosch.", "add"),
    _l("de:atk:aspiration", "möchte", "Ich arbeite bei Siemens.",
       "Ich möchte Ingenieurin bei Bosch werden.", "add"),
    _l("de:atk:pronoun", "sie ist", "Ich arbeite bei Siemens.", "Sie ist Ingenieurin bei Bosch.", "add"),
    # --- Spanish: "en" before a city, a feast, a past job said in the preterite ---------------------
    _l("es:atk:place-name", "en Madrid", "Trabajo en Telefónica.", "Soy ingeniera en Madrid.", "add"),
    _l("es:atk:not-employer", "en Navidad", "Trabajo en Telefónica.", "Este año trabajo en Navidad.", "add"),
    _l("es:atk:former", "fui", "Trabajo en Telefónica.", "De joven fui camarera en Zara.", "add"),
    _l("es:atk:former", "hace años era (control)", "Trabajo en Telefónica.",
       "Hace años era enfermera en el Hospital La Paz.", "add"),
    _l("es:atk:aspiration", "quiero", "Trabajo en Telefónica.", "Quiero ser diseñadora en Inditex.", "add"),
    _l("es:atk:pronoun", "es, sin sujeto", "Trabajo en Telefónica.", "Es diseñadora en Inditex.", "add"),
    _l("es:atk:other-person", "compañera de piso", "Trabajo en Telefónica.",
       "Mi compañera de piso es diseñadora en Inditex.", "add"),
    # --- French: "chez" before a person's name -------------------------------------------------------
    _l("fr:atk:person-name", "chez Julie", "Je travaille chez Orange.",
       "Ce soir je travaille chez Julie.", "add"),
    _l("fr:atk:second-job", "le samedi", "Je travaille chez Orange.", "Le samedi je suis serveuse chez Paul.",
       "add"),
    _l("fr:atk:former", "j'ai été", "Je travaille chez Orange.",
       "J'ai été serveuse chez Flunch pendant mes études.", "add"),
    _l("fr:atk:pronoun", "elle est", "Je travaille chez Orange.", "Elle est comptable chez Total.", "add"),
    _l("fr:atk:person-name", "chez mes parents (control)", "Je travaille chez Orange.",
       "Ce week-end je travaille chez mes parents.", "add"),
    # --- changes the rule was suspected to miss ----------------------------------------------------
    _l("atk:miss", "lower-case brand", "I work at Freightline.", "I'm now an engineer at eBay.", "update"),
    _l("atk:miss", "a digit first", "I work at Freightline.", "I'm now an engineer at 3M.", "update"),
    _l("atk:miss", "the BBC", "I work at Freightline.", "I'm now a producer at the BBC.", "update"),
    _l("atk:miss", "over at", "I'm a nurse at St. Mary's Hospital.",
       "I'm now a nurse over at Kaiser.", "update"),
    _l("atk:miss", "role not listed", "I work at Freightline.", "I'm a bus driver for Metro Transit now.",
       "update"),
    _l("atk:miss", "used to, now", "I work at Freightline.",
       "I used to work at Freightline, but now I'm a data engineer at Solvia.", "update"),
    _l("de:atk:miss", "bei der", "Ich arbeite bei Siemens.", "Ich bin jetzt Entwicklerin bei der Telekom.",
       "update"),
    _l("de:atk:miss", "früher, jetzt", "Ich arbeite bei Siemens.",
       "Früher war ich bei Siemens, jetzt bin ich Ingenieurin bei Bosch.", "update"),
    _l("de:atk:miss", "a fuller earlier", "Ich arbeite bei Siemens als Projektleiterin.",
       "Ich bin Entwicklerin bei SAP.", "update"),
    _l("es:atk:miss", "en el", "Mi hermana trabaja en Telefónica.",
       "Mi hermana ahora es enfermera en el Hospital La Paz.", "update"),
    _l("es:atk:miss", "antes, ahora", "Trabajo en Telefónica.",
       "Antes trabajaba en Telefónica, ahora soy diseñadora en Inditex.", "update"),
    _l("fr:atk:miss", "à l'hôpital", "Je travaille chez Orange.",
       "Maintenant je suis infirmière à l'hôpital Necker.", "update"),
)  # fmt: skip
