"""Attack on the update engine's second reading (`memories.pipeline.second_reading`, commit d208476):
a logistic regression learned from written pairs that turns the rules' ADD into UPDATE when it reads
"update" at 0.9 or more and the guards of `reconsider` pass. A wrong UPDATE hides a true fact.

Written by a helper who did not build it (stop 59, 7 December 2026), without reading the training
pairs. Each row is (old, new, the right verdict), run with `engine_verdict` (the rules, then the
second reading, as the worker decides). Must-not-replace rows are pairs where a wrong UPDATE would
hide a true fact: someone else's value said in ways the rules may not read as someone else's, a
second value of a many-valued thing, another attribute, a temporary state, a past episode, plans,
wishes, questions, quotes and reported speech, a negation of something else, a value said again with
a detail, Italian and Portuguese (no lexicon), agents' notes, two clauses. Should-replace rows are
real changes said in indirect ways. The rows the engine gets wrong are marked `xfail(strict=True)`
with the reason (for must-not rows: whether the rules alone got it right, i.e. whether the second
reading is to blame): they are the findings, not expected verdicts to change.

When the file was first run, 31 of 123 rows were wrong: 7 of 72 must-not-replace (a true fact
hidden), of which 3 the second reading caused (the rules alone said ADD: someone else's change, read
by the rules as someone else's, overruled at p(update) 0.94-0.96 because `reconsider` has no guard on
a different subject) and 4 the rules (a second value, a temporary state, a value said again with a
detail); and 24 of 51 should-replace (changes left ADD, one read as NEGATION). On these rows the
second reading turned 6 of the rules' ADDs into UPDATE: 3 right, 3 wrong.

Mended the same day: whose a statement is stays the rules' to say (`reconsider` keeps the rules' ADD
when they read two subjects, unless the prior says who fills one of the person's roles and the new
statement is the person's own about that role: "My dentist is Dr Patel" / "I've registered with a new
dentist, Dr Moore", `_fills_role`). The three rows pass and lost their marks; the 28 left are the
rules' and the reading's remaining misses, each with its reason. A later guard (the new statement must
name what the prior is of, after decoys in the update-order sets hid true values) lost one should row
the reading had taken, the Portuguese sale of the Clio; it is marked with its reason.

Pure rules with the real embedding model for the similarity the worker would measure, no database.
"""

from __future__ import annotations

import pytest

from memories.pipeline.update import Verdict
from tests.memories.pipeline.test_second_reading import engine_verdict

ADD, SAME, UPDATE = Verdict.ADD, Verdict.SAME, Verdict.UPDATE


def _fails(old: str, new: str, expected: Verdict, reason: str):
    return pytest.param(old, new, expected, marks=pytest.mark.xfail(strict=True, reason=reason))


MUST_NOT_REPLACE = [
    # --- 1. someone else's value, said in ways the rules may not read as someone else's ---
    ("I live in Leeds.", "Tom lives in Manchester now.", ADD),
    ("I live in Leeds.", "He moved to Manchester last month.", ADD),
    ("I work as a nurse at St James's.", "My mate's a paramedic now.", ADD),
    ("I work at Deloitte.", "A colleague of mine just joined KPMG.", ADD),
    ("I work at Deloitte.", "My boss left for PwC.", ADD),
    ("My phone is an iPhone 13.", "Sarah switched to a Pixel 8.", ADD),
    ("I drive a Golf.", "My partner drives a Tesla now.", ADD),
    ("I'm vegetarian.", "My flatmate went vegan in January.", ADD),
    ("My dentist is Dr Patel.", "Mum's dentist is Dr Okafor now.", ADD),
    ("I support Arsenal.", "My son supports Spurs these days.", ADD),
    ("Ich wohne in Hamburg.", "Meine Schwester wohnt jetzt in Köln.", ADD),
    ("Vivo en Sevilla.", "Mi cuñado se mudó a Bilbao.", ADD),
    ("J'habite à Lyon.", "Mon beau-frère habite maintenant à Nantes.", ADD),
    ("Abito a Torino.", "Mia sorella si è trasferita a Napoli.", ADD),
    ("Moro em Lisboa.", "O meu irmão mudou-se para o Porto.", ADD),
    ("Lavoro come insegnante.", "Mio marito adesso lavora come avvocato.", ADD),
    ("Trabalho num banco.", "A minha mulher agora trabalha numa escola.", ADD),
    ("I'm a software engineer at Spotify.", "User's husband is now a software engineer at Klarna.", ADD),
    ("User lives in Denver.", "User's daughter moved to Boulder for college.", ADD),
    ("My GP is Dr Lewis.", "The kids' GP is Dr Shah.", ADD),
    # --- 2. a second value of a many-valued thing ---
    ("I work part-time at a bakery.", "I've picked up a second job at the library on weekends.", ADD),
    ("I have a dog called Rufus.", "We got a rabbit called Clover.", ADD),
    ("I play tennis on Saturdays.", "I've started bouldering on Wednesdays.", ADD),
    ("I speak French.", "I'm fluent in Spanish as well.", ADD),
    ("I'm allergic to penicillin.", "Turns out I'm allergic to shellfish too.", ADD),
    ("My favourite band is Radiohead.", "I've been really into Fontaines D.C. lately.", ADD),
    _fails(
        "I volunteer at the food bank.",
        "I joined the parkrun volunteer team.",
        ADD,
        (
            "a second volunteering role read as a change of the first; the rules' doing (rules alone say "
            "UPDATE too), not the second reading's"
        ),
    ),
    ("I take metformin daily.", "The doctor put me on atorvastatin as well.", ADD),
    ("I'm reading Middlemarch.", "I started The Overstory on my commute.", ADD),
    ("Tengo un gato llamado Simba.", "Ahora tenemos también un perro, Coco.", ADD),
    # --- 3. not the same attribute ---
    ("My work address is 10 Fleet Street.", "My home address is 4 Elm Road.", ADD),
    ("My son goes to Greenfield Primary.", "I'm studying at the Open University.", ADD),
    ("My office is on the 3rd floor.", "My flat is on the 5th floor.", ADD),
    ("My personal email is jo@gmail.com.", "My work email is jo.smith@acme.com.", ADD),
    ("I cycle to work.", "I drive the kids to school.", ADD),
    ("My rent is £900 a month.", "My council tax is £140 a month.", ADD),
    ("My weekday alarm is 6:30.", "On Sundays I sleep until 9.", ADD),
    ("Our wifi password is on the fridge.", "The router's admin password is in the drawer.", ADD),
    # --- 4. temporary states ---
    ("I drive to work.", "I'm taking the bus this week while my car is in the garage.", ADD),
    ("I live in Bristol.", "I'm staying at my parents' in Cardiff for the summer.", ADD),
    _fails(
        "I work from the London office.",
        "This week I'm working from the Berlin office.",
        ADD,
        (
            "'this week' is a temporary state, read as a move of office; the rules' doing (rules alone "
            "say UPDATE too), not the second reading's"
        ),
    ),
    ("My number is 07700 900123.", "While I'm in Spain I'm on +34 612 345 678.", ADD),
    ("I run 5k every morning.", "I'm off running for a fortnight with a sprained ankle.", ADD),
    # --- 5. past episodes and anecdotes ---
    ("I live in Glasgow.", "Back in 2015 I lived in Aberdeen for a year.", ADD),
    ("I work at Google.", "My first job was at a call centre in Swindon.", ADD),
    ("I drive a Volvo.", "I rented a Fiat 500 on holiday in Sicily.", ADD),
    ("My favourite restaurant is Dishoom.", "We had dinner at Hawksmoor on Friday.", ADD),
    ("I'm a teacher.", "When I was at uni I worked as a barman.", ADD),
    # --- 6. plans, wishes, hypotheticals, questions, quotes, reported speech ---
    ("I live in Leeds.", "If I got the job I'd move to Edinburgh.", ADD),
    ("I work at Aviva.", "I'd love to work at the BBC one day.", ADD),
    ("I live in Leeds.", "My wife keeps saying we should move to York.", ADD),
    ("My salary is £42,000.", "The recruiter said I could get £55,000 at Ocado.", ADD),
    ("I live in Leeds.", '"Move to Harrogate," my dad told me.', ADD),
    ("I drive a Golf.", "Would a Skoda Octavia be cheaper to run?", ADD),
    ("Ich arbeite bei SAP.", "Vielleicht wechsle ich nächstes Jahr zu Siemens.", ADD),
    ("Vivo en Madrid.", "Me gustaría vivir en Valencia algún día.", ADD),
    ("Lavoro a Milano.", "Forse l'anno prossimo mi trasferisco a Roma.", ADD),
    # --- 7. negation of something else ---
    ("I'm allergic to peanuts.", "I'm not allergic to cats, it turns out.", ADD),
    ("I live in Leeds.", "I've never lived in London.", ADD),
    ("I drink coffee every morning.", "I don't drink tea anymore.", ADD),
    # --- 8. the value said again with a new detail ---
    _fails(
        "I live in Leeds.",
        "I live in Leeds, in Headingley, near the cricket ground.",
        ADD,
        (
            "the same city with a new detail replaces the prior (ADD or SAME expected, never a change); "
            "the rules' doing (rules alone say UPDATE too), not the second reading's"
        ),
    ),
    ("I work at the NHS as a nurse.", "I'm a nurse at the NHS, on the cardiac ward.", ADD),
    ("My dog is called Rufus.", "Rufus is a three-year-old beagle.", ADD),
    _fails(
        "I teach maths at Hillside School.",
        "I've taught maths at Hillside for six years now.",
        ADD,
        (
            "the same job with a duration replaces the prior; the rules' doing (rules alone say UPDATE "
            "too), not the second reading's"
        ),
    ),
    # --- 9. agents' notes ---
    ("User lives in Austin.", "User's company is headquartered in Dallas.", ADD),
    ("User works as a data analyst.", "User's manager recently became head of engineering.", ADD),
    ("The user drives a Honda Civic.", "The user is test-driving a Kia EV6 this weekend.", ADD),
    ("User prefers tea.", "User ordered a coffee for their guest.", ADD),
    # --- 10. long sentences with two clauses ---
    (
        "I live in Leeds.",
        "My brother moved to Sheffield last year and I still visit him most weekends.",
        ADD,
    ),
    (
        "I work at Barclays.",
        "I'm still at Barclays, but my wife just moved from HSBC to Monzo.",
        ADD,
    ),
    (
        "My gym is PureGym on Kirkstall Road.",
        "My sister joined the Nuffield gym, and I might try a class there with her.",
        ADD,
    ),
    ("Mi médico es el doctor Ruiz.", "Mi madre cambió de médico y ahora va a la doctora Gómez.", ADD),
]


SHOULD_REPLACE = [
    # --- English, indirect ---
    _fails(
        "I live in Leeds.",
        "We finally got the keys to our new place in York.",
        UPDATE,
        "a move said as getting keys to a new place: no move cue read, left ADD",
    ),
    _fails(
        "I work at Deloitte.",
        "Today was my first day at KPMG.",
        UPDATE,
        "a first day at a new employer left ADD",
    ),
    ("I work at Deloitte.", "I handed in my notice at Deloitte and start at EY on Monday.", UPDATE),
    _fails(
        "I drive a Golf.",
        "Sold the Golf and picked up a second-hand Corolla.",
        UPDATE,
        "'sold ... picked up' left ADD",
    ),
    ("My phone is an iPhone 13.", "Upgraded my phone to an iPhone 15 yesterday.", UPDATE),
    ("My rent is £900 a month.", "The landlord put my rent up to £975.", UPDATE),
    _fails(
        "My salary is £42,000.",
        "Got a raise, I'm on £46,000 now.",
        UPDATE,
        "a raise with the new amount left ADD",
    ),
    ("My dentist is Dr Patel.", "I've registered with a new dentist, Dr Moore.", UPDATE),
    _fails("I'm a vegetarian.", "I've gone fully vegan since March.", UPDATE, "'gone vegan' left ADD"),
    ("My number is 07700 900123.", "New number: 07700 900456.", UPDATE),
    _fails(
        "My email is jo@hotmail.com.",
        "I don't use hotmail anymore, it's jo@proton.me now.",
        UPDATE,
        "read as NEGATION (the prior ended, the new address not taken as its replacement)",
    ),
    _fails(
        "I'm single.", "I got engaged to Priya last weekend.", UPDATE, "engagement ends 'single': left ADD"
    ),
    ("My gym is PureGym.", "I cancelled PureGym and joined The Gym Group.", UPDATE),
    _fails(
        "I do yoga on Mondays.",
        "My yoga class moved to Thursdays.",
        UPDATE,
        "a class moved to another day left ADD",
    ),
    _fails(
        "My manager is Karen.",
        "Karen left, so I report to Steve now.",
        UPDATE,
        "'report to Steve now' left ADD",
    ),
    _fails(
        "I weigh 82 kg.", "I'm down to 76 kg after the diet.", UPDATE, "a new weight ('down to') left ADD"
    ),
    ("I'm 34.", "Just turned 35 today.", UPDATE),
    _fails(
        "My bank is Lloyds.",
        "Moved all my accounts over to Monzo.",
        UPDATE,
        "accounts moved to another bank left ADD",
    ),
    _fails(
        "I commute by train.",
        "Since the move I cycle to work every day.",
        UPDATE,
        "a new way to commute left ADD",
    ),
    ("My broadband is Virgin Media.", "We switched broadband to BT last month.", UPDATE),
    _fails(
        "My son Leo goes to Greenfield Primary.",
        "Leo's moved up to Hillside Secondary.",
        UPDATE,
        "the son's new school ('moved up to') left ADD",
    ),
    ("I'm a junior developer.", "I got promoted to senior developer.", UPDATE),
    _fails(
        "I work at Tesco.",
        "I'm not at Tesco anymore, I'm at Aldi.",
        UPDATE,
        "'not at Tesco anymore, I'm at Aldi' left ADD (not even NEGATION)",
    ),
    _fails("I'm a smoker.", "Six months smoke-free now, I quit in June.", UPDATE, "'quit' smoking left ADD"),
    # --- agents' notes ---
    ("User lives in Austin.", "User has relocated to Seattle.", UPDATE),
    ("User works at Stripe.", "User recently joined Shopify as a product manager.", UPDATE),
    _fails(
        "The user's car is a Honda Civic.",
        "The user traded in the Civic for a Mazda CX-5.",
        UPDATE,
        "a trade-in in an agent's note left ADD",
    ),
    _fails("User's preferred name is Robert.", "User now goes by Bob.", UPDATE, "'now goes by' left ADD"),
    ("User is on the Basic plan.", "User upgraded to the Pro plan.", UPDATE),
    ("User's timezone is EST.", "User moved to London, timezone is now GMT.", UPDATE),
    # --- German ---
    ("Ich wohne in Hamburg.", "Wir sind nach Bremen umgezogen.", UPDATE),
    ("Ich arbeite bei SAP.", "Seit Oktober bin ich bei Siemens.", UPDATE),
    ("Ich fahre einen Golf.", "Den Golf habe ich verkauft, jetzt fahre ich einen Passat.", UPDATE),
    ("Meine Miete beträgt 800 Euro.", "Die Miete wurde auf 850 Euro erhöht.", UPDATE),
    (
        "Mein Zahnarzt ist Dr. Weber.",
        "Ich habe den Zahnarzt gewechselt, jetzt gehe ich zu Dr. Braun.",
        UPDATE,
    ),
    # --- Spanish ---
    ("Vivo en Sevilla.", "Nos hemos mudado a Málaga.", UPDATE),
    ("Trabajo en Telefónica.", "Dejé Telefónica y ahora trabajo en Iberdrola.", UPDATE),
    _fails(
        "Mi coche es un Seat Ibiza.",
        "Vendí el Ibiza y me compré un Toyota Yaris.",
        UPDATE,
        "Spanish 'vendí ... me compré' left ADD",
    ),
    ("Mi número es 612 345 678.", "He cambiado de número: ahora es 698 765 432.", UPDATE),
    _fails(
        "Soy soltera.", "Me casé con Javier en mayo.", UPDATE, "Spanish marriage ends 'soltera': left ADD"
    ),
    # --- French ---
    ("J'habite à Lyon.", "Nous avons déménagé à Grenoble.", UPDATE),
    ("Je travaille chez Renault.", "J'ai quitté Renault, je suis chez Airbus maintenant.", UPDATE),
    ("Mon loyer est de 700 euros.", "Mon loyer est passé à 760 euros.", UPDATE),
    _fails(
        "Je suis végétarienne.",
        "Je suis devenue végane cette année.",
        UPDATE,
        "French 'devenue végane' left ADD",
    ),
    # --- Italian (no lexicon) ---
    _fails("Abito a Torino.", "Mi sono trasferito a Milano.", UPDATE, "Italian move (no lexicon) left ADD"),
    _fails(
        "Lavoro alla Fiat.",
        "Ho lasciato la Fiat, adesso lavoro alla Ferrari.",
        UPDATE,
        "Italian 'ho lasciato ... adesso' (no lexicon) left ADD",
    ),
    ("Il mio numero è 333 123 4567.", "Ho cambiato numero, ora è 347 765 4321.", UPDATE),
    # --- Portuguese (no lexicon) ---
    _fails("Moro em Lisboa.", "Mudei-me para o Porto.", UPDATE, "Portuguese move (no lexicon) left ADD"),
    ("Trabalho na Galp.", "Saí da Galp e agora trabalho na EDP.", UPDATE),
    _fails(
        "O meu carro é um Renault Clio.",
        "Vendi o Clio e comprei um Peugeot 208.",
        UPDATE,
        (
            "taken by the reading when first run; lost to its later guard that the new statement must "
            "name what the prior is of (a frame word, the person, or a change done to its value): "
            "'vendi' is no change verb the engine knows (no Portuguese lexicon), and the two share only "
            "the value 'Clio'"
        ),
    ),
    _fails(
        "Meu salário é R$ 5.000.",
        "Recebi um aumento, agora ganho R$ 6.200.",
        UPDATE,
        "Portuguese raise with the new amount (no lexicon) left ADD",
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), MUST_NOT_REPLACE)
def test_must_not_replace(old, new, expected):
    assert engine_verdict(old, new) is expected


@pytest.mark.parametrize(("old", "new", "expected"), SHOULD_REPLACE)
def test_should_replace(old, new, expected):
    assert engine_verdict(old, new) is expected
