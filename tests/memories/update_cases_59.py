"""Batch 59 of update cases, written blind on 7 December 2026 (stop 59), before any run.

The helper who wrote it had read neither the update engine nor the earlier batches' cases (only the
`Case` shape in update_cases.py and the `_b` helper of update_cases_40.py). It tests, in the way real
clients save memories:

- `agent`: memories an AI agent saved in the third person ("User lives in ..."), later restated,
  changed or joined by another person's fact, in either voice;
- `number`: a standing numeric value changed (rent, dose, commute, counts, times), with and without a
  verb of change, next to a number of another thing that must stay;
- `indirect`: corrections said indirectly ("turns out", "I had it wrong", "scratch that", "they moved
  it to");
- `inside`: the change (or a non-change) sits inside a longer note of several sentences, and earlier
  longer notes of which one sentence later changes. Where the earlier statement is such a note, its
  other facts still hold, so the whole-note row is expected to stay current ("add"; the case name
  says so);
- `lang`: changes, repeats and non-changes in German, Spanish, French, Italian and Portuguese;
- `must-not`: later statements that look like a change but are not (another person's value, a
  second value of a many-valued fact, plans, wishes, questions, past episodes, the same attribute of
  another thing, temporary states, hypotheticals, quotes, a value said again with a new detail);
- `same`: paraphrases and repeats, first person against the agent's third person.
"""

from __future__ import annotations

from tests.memories.update_cases import Case
from tests.memories.update_cases_40 import _b

_n = _b("59")

BATCH_59: tuple[Case, ...] = (
    # --- agent-written memories ---------------------------------------------------------------------
    _n("agent", "agent city, first-person move", "User lives in Rotterdam.",
       "I moved to Utrecht last month.", "update"),
    _n("agent", "agent sister, first-person repeat", "The user's sister Ana is a nurse in Porto.",
       "My sister Ana is a nurse in Porto.", "same"),
    _n("agent", "agent display preference flipped", "User prefers dark mode in all apps.",
       "User now prefers light mode in all apps; dark mode strains their eyes.", "update"),
    _n("agent", "agent employer, husband's employer",
       "User works as a payroll specialist at Kestrel Logistics.",
       "User's husband also works at Kestrel Logistics, in the warehouse.", "add"),
    _n("agent", "first-person allergy, agent repeat", "I'm allergic to penicillin.",
       "User is allergic to penicillin.", "same"),
    _n("agent", "agent car replaced", "User drives a 2017 Mazda 3.",
       "User sold the Mazda and now drives a Kia Niro.", "update"),
    _n("agent", "agent daughter's violin, son's violin", "User's daughter Priya is 7 and plays the violin.",
       "User's son Dev has started violin lessons too.", "add"),
    _n("agent", "first-person marathon, agent repeat", "I'm training for the Valencia marathon in December.",
       "User is training for the Valencia Marathon, which is held in December.", "same"),
    _n("agent", "agent manager changed by reorg", "User's manager is Helen Ortiz.",
       "After the reorg, user's manager is Marcus Bell.", "update"),
    _n("agent", "agent diet, partner's diet", "User is vegetarian.",
       "User's partner Jonas is vegan.", "add"),
    _n("agent", "agent phone, first-person switch", "User uses a Pixel 7 as their phone.",
       "I switched to an iPhone 15 last week, the Pixel's in a drawer.", "update"),
    _n("agent", "agent pronouns changed", "User's preferred pronouns are she/her.",
       "User's preferred pronouns are now they/them.", "update"),
    _n("agent", "agent badminton, first-person repeat", "User plays badminton on Tuesday evenings.",
       "I play badminton every Tuesday evening.", "same"),
    _n("agent", "agent dentist retired", "User's dentist is Dr. Okafor in Clapham.",
       "Dr. Okafor retired, so I'm seeing Dr. Lindqvist at the same practice now.", "update"),
    _n("agent", "agent second language learnt", "User is learning Japanese.",
       "User has also started learning Korean.", "add"),
    # --- numbers ------------------------------------------------------------------------------------
    _n("number", "rent after renewal, other cost kept",
       ("My rent is €1,150 a month.", "My council tax is €140 a month."),
       "Rent's €1,240 since the lease renewal.", "update"),
    _n("number", "dose raised", "I take 50 mg of sertraline every morning.",
       "My doctor raised my sertraline to 100 mg a day.", "update"),
    _n("number", "commute longer, no verb", "My commute is 35 minutes each way.",
       "My commute is about 50 minutes each way now that the bridge is closed.", "update"),
    _n("number", "chickens counted again", "We keep 3 chickens in the back garden.",
       "We've got 5 chickens now, we picked up two more at the weekend.", "update"),
    _n("number", "golf handicap down", "My golf handicap is 18.",
       "Got my golf handicap down to 14 this season.", "update"),
    _n("number", "weekday alarm earlier", "My alarm is set for 6:15 on weekdays.",
       "I've set my weekday alarm to 5:45 now.", "update"),
    _n("number", "broadband upgraded", "My home broadband is 200 Mbps.",
       "Upgraded the home broadband to 900 Mbps.", "update"),
    _n("number", "car mileage", "My car has 84,000 km on it.",
       "The car just passed 91,000 km.", "update"),
    _n("number", "weight down", "I weigh 82 kg.", "I'm down to 77 kg.", "update"),
    _n("number", "school start repeated", "My daughter's school starts at 8:40.",
       "School starts at 8.40 for my daughter.", "same"),
    _n("number", "parking is not rent", "My rent is €1,150 a month.",
       "My parking space costs €90 a month.", "add"),
    # --- indirect corrections -----------------------------------------------------------------------
    _n("indirect", "turns out, niece's birthday", "My niece's birthday is on 14 May.",
       "Turns out my niece's birthday is the 4th of May, I misread the card.", "update"),
    _n("indirect", "they moved the standup, other meeting kept",
       ("Our team standup on Thursdays is at 9:30.", "Our Monday planning meeting is at 11."),
       "They moved the Thursday standup to 10:15.", "update"),
    _n("indirect", "I had it wrong, landlord", "My landlord is called Mr. Hargreaves.",
       "I had it wrong, the landlord's name is Mr. Greaves.", "update"),
    _n("indirect", "scratch that, visit date", "My mother-in-law is coming to stay on the 22nd.",
       "Scratch that, my mother-in-law is coming on the 29th instead.", "update"),
    _n("indirect", "actually, blood type", "My blood type is A positive.",
       "My blood type is actually O positive, I checked my donor card.", "update"),
    _n("indirect", "lessons got moved", "The kids' swimming lessons are at Westfield pool.",
       "The kids' swimming lessons got moved to the Ashgrove leisure centre.", "update"),
    _n("indirect", "checked the booking, airport", "My flight home on Sunday lands at Gatwick.",
       "Just checked the booking: my flight home on Sunday lands at Stansted, not Gatwick.", "update"),
    _n("indirect", "oops, neighbour's name", "My neighbour is called Brendan.",
       "Oops, my neighbour is called Brandon, I've been getting it wrong for a year.", "update"),
    _n("indirect", "apparently, bin day", "The bins get collected on Wednesdays.",
       "Apparently bin day is Friday now, the council changed the schedule.", "update"),
    _n("indirect", "the clinic rang, physio", "My physio appointment is on Monday at 4pm.",
       "The clinic rang, they pushed my physio appointment to Tuesday at 4pm.", "update"),
    _n("indirect", "turns out, a colleague's hometown", "My cousin Tomasz lives in Gdańsk.",
       "Turns out my colleague Ewa grew up in Gdańsk too.", "add"),
    # --- changes and non-changes inside longer notes ------------------------------------------------
    _n("inside", "job change inside a busy-week note",
       "I work at Brightwater Insurance as a claims adjuster.",
       "Busy week. Finished my last day at Brightwater Insurance on Friday and I start at Halden Bank as "
       "a risk analyst on Monday. The kids have half-term so my mum is helping out. Also need to book the "
       "car in for its MOT.", "update"),
    _n("inside", "GP change inside a note", "My GP is Dr. Feld at the Riverside practice.",
       "Registered with a new GP since the move: I'm with Dr. Amari at Northgate Surgery now. Picked up "
       "my repeat prescription there yesterday. The pharmacy next door is much quicker too.", "update"),
    _n("inside", "move said last in a note", "I live in Bristol.",
       "Quick update on life: the kids are settling into their new school, Rafa started football on "
       "Saturdays, and I finally unpacked the last boxes. Loving the sea air here in Brighton since we "
       "moved from Bristol.", "update"),
    _n("inside", "partner's night shift mentioned in a day note",
       "My partner Lena works night shifts at the hospital.",
       "Long day. Took the dog to the vet for his jabs, then fixed the leaky tap in the bathroom. Lena "
       "slept most of the afternoon after her night shift. Ordered pizza for dinner.", "add"),
    _n("inside", "allergy restated inside a dinner note", "I'm allergic to shellfish.",
       "Dinner with the Hendersons tonight. I told them I'm allergic to shellfish so they're doing a lamb "
       "roast. I'm bringing a bottle of Rioja and a lemon tart.", "add"),
    _n("inside", "step goal raised inside a fitness note", "My daily step goal is 8,000.",
       "Doing well on the fitness front. Bumped my daily step goal up to 10,000 this month. Swapped the "
       "evening crisps for fruit, and I'm sleeping better. Still skipping the gym on Fridays though.",
       "update"),
    _n("inside", "son's school unchanged in a parents' evening note",
       "My son Oskar is in year 4 at Elmhurst Primary.",
       "Parents' evening went well. Oskar's teacher says his reading is way ahead. We also signed him up "
       "for chess club on Wednesdays. He wants a hamster for his birthday.", "add"),
    _n("inside", "stepped down inside a note", "I'm on the board of the Millbrook allotment society.",
       "Lots going on. I stepped down from the allotment society board after six years, too much with "
       "the new job. Still keeping my plot though. Tomatoes did brilliantly this summer.", "update"),
    _n("inside", "husband's office days inside a note", "I work from home on Mondays and Fridays.",
       "My husband's company changed its rules: he now has to be in the office four days a week and can "
       "only work from home on Fridays. Means I'll do most school runs. Need to sort the childcare rota.",
       "add"),
    _n("inside", "earlier note, one of four facts dropped: whole-note row stays (add)",
       "About me: I'm a dental hygienist in Leicester. I have two kids, Mia and Theo. I cycle to work most "
       "days. I'm learning the cello.",
       "I gave up the cello, not enough time.", "add"),
    _n("inside", "earlier note, laptop swapped: whole-note row stays (add)",
       "My work setup: a ThinkPad X1 laptop, a 27-inch Dell monitor and a Keychron keyboard. All my "
       "meetings are on Teams.",
       "IT swapped my work ThinkPad for a MacBook Pro.", "add"),
    _n("inside", "earlier note, a new fact beside it: whole-note row stays (add)",
       "Health notes: I have mild asthma and use a blue inhaler when needed. I had my appendix out in "
       "2019. I get a flu jab every autumn.",
       "I've been diagnosed with high blood pressure and started on ramipril.", "add"),
    # --- other languages ----------------------------------------------------------------------------
    _n("de:lang", "umgezogen", "Ich wohne in Freiburg.",
       "Wir sind letzten Monat nach Karlsruhe gezogen.", "update"),
    _n("de:lang", "Hausarzt heißt", "Mein Hausarzt ist Dr. Brenner.",
       "Mein Hausarzt heißt Dr. Brenner.", "same"),
    _n("de:lang", "Auto der Frau", "Ich fahre einen VW Golf.",
       "Meine Frau fährt einen Skoda Octavia.", "add"),
    _n("de:lang", "wieder Wein", "Ich trinke keinen Alkohol.",
       "Seit Weihnachten trinke ich wieder ab und zu ein Glas Wein.", "update"),
    _n("es:lang", "dejé el Clínico", "Trabajo de enfermera en el Hospital Clínico.",
       "Dejé el Clínico en septiembre, ahora trabajo en un centro de salud en Getafe.", "update"),
    _n("es:lang", "alergia de Mateo", "Mi hijo Mateo tiene alergia a los frutos secos.",
       "Mi hijo Mateo es alérgico a los frutos secos.", "same"),
    _n("es:lang", "de viaje en Bilbao", "Vivo en Sevilla.",
       "Esta semana estoy en Bilbao por trabajo.", "add"),
    _n("es:lang", "alquiler subido", "Mi alquiler es de 780 euros al mes.",
       "Me subieron el alquiler a 820 euros al mes.", "update"),
    _n("fr:lang", "padel aussi", "Je joue au tennis le mercredi soir.",
       "Je joue aussi au padel le samedi matin.", "add"),
    _n("fr:lang", "dix ans", "Mon fils Hugo a 9 ans.", "Mon fils Hugo vient d'avoir 10 ans.", "update"),
    _n("fr:lang", "opérateur Free", "Mon opérateur mobile est Free.",
       "Je suis chez Free pour mon forfait mobile.", "same"),
    _n("fr:lang", "changé de banque", "Ma banque est le Crédit Agricole.",
       "J'ai fermé mon compte au Crédit Agricole, je suis passée chez Boursorama.", "update"),
    _n("it:lang", "fratello ingegnere", "Lavoro come architetto a Bologna.",
       "Mio fratello lavora a Bologna come ingegnere.", "add"),
    _n("pt:lang", "troquei o Clio", "O meu carro é um Renault Clio.",
       "Troquei o Clio por um Peugeot 208.", "update"),
    # --- must not supersede -------------------------------------------------------------------------
    _n("must-not", "wife's birthday", "My birthday is on 3 October.",
       "My wife's birthday is on 19 October.", "add"),
    _n("must-not", "a second dog", "I have a border collie called Juno.",
       "We also adopted a rescue greyhound called Pip.", "add"),
    _n("must-not", "a second language spoken", "I speak Portuguese fluently.",
       "I speak decent Swahili too.", "add"),
    _n("must-not", "thinking of moving", "I live in Sheffield.",
       "Thinking of moving to Harrogate next year.", "add"),
    _n("must-not", "a wish for a camper van", "I drive a Ford Focus.",
       "I'd love to get a camper van one day.", "add"),
    _n("must-not", "a question about another bank", "My bank is Monzo.",
       "Is Starling better than Monzo for joint accounts?", "add"),
    _n("must-not", "a past year abroad", "I live in Cardiff.",
       "I lived in Valencia for a year back in 2015.", "add"),
    _n("must-not", "wife's car", "My car is a silver Toyota Yaris.",
       "My wife's car is a red Fiat 500.", "add"),
    _n("must-not", "work phone vs personal phone", "My personal phone number is 07700 900412.",
       "My work phone number is 07700 900877.", "add"),
    _n("must-not", "a conference this week", "I live in Glasgow.",
       "I'm in Lisbon this week for a conference.", "add"),
    _n("must-not", "if I got the offer", "I work at Carrow Pharma.",
       "If I got the Zurich offer I'd leave Carrow Pharma.", "add"),
    _n("must-not", "dad's quote about the club", "I support Aston Villa.",
       "My dad always says: 'Villa will break your heart, support Wolves instead.'", "add"),
    _n("must-not", "still at the studio, new office", "I work at Fenwick Studios.",
       "I'm still at Fenwick Studios; we just moved into a new office by the canal.", "add"),
    _n("must-not", "covering another office until Friday", "I work from the Manchester office.",
       "I'm covering at the Birmingham office until Friday.", "add"),
    _n("must-not", "son's steak", "I like my steak medium-rare.",
       "My son only eats his steak well done.", "add"),
    _n("must-not", "a second allergy", "I'm allergic to cats.",
       "I'm also allergic to birch pollen.", "add"),
    _n("must-not", "first car", "I drive a Hyundai i30.",
       "My first car was a Nissan Micra.", "add"),
    _n("must-not", "gaming PC's system", "My laptop runs Windows 11.",
       "My gaming PC runs Linux.", "add"),
    _n("must-not", "rent if we moved", "Our rent is $2,100 a month.",
       "If we moved to a two-bed, the rent would be about $2,600.", "add"),
    _n("must-not", "brother-in-law left the firm", "My sister works at Deloitte.",
       "My sister's husband just left Deloitte for KPMG.", "add"),
    _n("must-not", "daughter stopped eating fish", "I eat fish.",
       "My daughter won't eat fish anymore.", "add"),
    _n("must-not", "might not renew", "I'm a member of the Ridgeway tennis club.",
       "I might not renew my Ridgeway tennis club membership next spring.", "add"),
    _n("must-not", "two day shifts last week", "I work night shifts at the depot.",
       "Last week I did two day shifts at the depot to cover for someone.", "add"),
    # --- same fact again ----------------------------------------------------------------------------
    _n("same", "lactose intolerant, reason given", "I'm lactose intolerant.",
       "Dairy doesn't agree with me, I'm lactose intolerant.", "same"),
    _n("same", "agent anniversary, first-person", "User's wedding anniversary is 12 August.",
       "Our wedding anniversary is on the 12th of August.", "same"),
    _n("same", "left-handed, agent voice", "I'm left-handed.", "User is left-handed.", "same"),
    _n("same", "son's name, reworded", "My son's name is Kwame.", "I have a son called Kwame.", "same"),
    _n("same", "sound engineer, reworded", "I'm a sound engineer at the Crucible Theatre.",
       "I work at the Crucible Theatre as their sound engineer.", "same"),
    _n("same", "train time, reworded", "I take the 7:52 train to work.",
       "My train to work is the 7.52.", "same"),
    _n("same", "Celtic fan", "I support Celtic.", "I'm a Celtic fan.", "same"),
    _n("same", "agent mortgage, first-person", "The user has a mortgage with Nationwide.",
       "My mortgage is with Nationwide.", "same"),
    _n("same", "horror films", "I can't stand horror films.",
       "Horror movies are not my thing at all.", "same"),
)  # fmt: skip
