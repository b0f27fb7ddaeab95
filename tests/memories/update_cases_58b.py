"""Batch 58b of update cases, written blind after the stop's rule changes on 7 December 2026 (stop 58).

Written before any run by a helper who had read neither the update engine nor the earlier cases (only
the `Case` shape and the `_b` helper). What it tests, by class (`cls`, a language prefix where it is
not English):

- `agent`: memories as AI memory tools save them, in the third person ("User lives in ..."), against a
  later agent-written or first-person statement: changes, repeats and other people's facts;
- `number`: a standing numeric value changed (rent, dose, counts, times, limits), with and without a
  change verb, and one reworded repeat;
- `indirect`: corrections said indirectly ("turns out", "scratch that", "it's actually", "they moved
  it to"), and one "turns out" that only adds;
- `inside`: a change inside a longer note of several sentences, notes that change nothing of the
  earlier fact, and earlier notes whose one sentence is later changed (the whole-note row keeps its
  other true facts, so "add": the case name says so);
- `lang`: changes, repeats and non-changes in German, Spanish, French, Italian and Portuguese;
- `must-not`: statements that look like a change but are not: another person's value, a second value
  of a many-valued fact, plans, wishes, past episodes, the same attribute of another thing, temporary
  states, hypotheticals, quotes, and a value that still holds said again with a new detail;
- `same`: paraphrases and repeats, first person against third-person agent phrasing.
"""

from __future__ import annotations

from tests.memories.update_cases import Case
from tests.memories.update_cases_40 import _b

_x = _b("58b")

BATCH_58B: tuple[Case, ...] = (
    # --- agent-written memories (third person) ----------------------------------------------------
    _x("agent", "moved city, agent then first person", ("User lives in Rotterdam.",
       "User works at the Port of Rotterdam."), "I moved to Utrecht last month but still work at the port.",
       "update"),
    _x("agent", "sister's job changed", "The user's sister Marta is a pharmacist in Valencia.",
       "User's sister Marta left the pharmacy and now teaches chemistry at a secondary school.", "update"),
    _x("agent", "invoice format preference", "User prefers receiving invoices as PDF attachments.",
       "Send my invoices as download links from now on, I don't want attachments anymore.", "update"),
    _x("agent", "car replaced, first person then agent", "I drive a 2014 Skoda Octavia.",
       "User replaced their Skoda Octavia with a Kia Niro EV.", "update"),
    _x("agent", "daughter's school", "User's daughter Lina attends Brookfield Primary School.",
       "Lina left Brookfield in July and started at Hollins Academy in September.", "update"),
    _x("agent", "dentist switched", "User's dentist is Dr. Okafor at Riverside Dental.",
       "User switched dentists and now sees Dr. Brennan at Smile Studio.", "update"),
    _x("agent", "remote to hybrid", "User works fully remotely, from home five days a week.",
       "My company ended fully remote work; I'm in the office three days a week now.", "update"),
    _x("agent", "gym cancelled for climbing", "User's gym is PureGym on Deansgate.",
       "I cancelled PureGym and joined the Depot climbing wall instead.", "update"),
    _x("agent", "lactose repeat", "User is lactose intolerant.",
       "Just so you know, I'm lactose intolerant.", "same"),
    _x("agent", "marathon repeat", "I'm training for the Berlin Marathon in September.",
       "User is training for the Berlin Marathon, which takes place in September.", "same"),
    _x("agent", "preferred name repeat", "The user's preferred name is Kit.",
       "Please call me Kit, that's the name I go by.", "same"),
    _x("agent", "husband's job is another person's", "User works as a freelance translator.",
       "User's husband Idris is a translator at the European Commission.", "add"),
    _x("agent", "second pet", "User has a cat named Pixel.",
       "User also adopted a rabbit named Juniper.", "add"),
    _x("agent", "son learns another language", "User is learning Japanese on Duolingo.",
       "User's son is learning Korean at school.", "add"),
    _x("agent", "mother visiting is temporary", "User's mother lives in Cork.",
       "User's mother is staying with them in Galway for two weeks.", "add"),
    _x("agent", "router vs provider", "User's WiFi router is a Fritz!Box 7590.",
       "User's internet provider is Vodafone.", "add"),
    # --- numbers ----------------------------------------------------------------------------------
    _x("number", "rent without a verb", ("My rent is €1,140 a month.",
       "My electricity bill is about €90 a month."), "Rent's €1,210 since the lease renewal.", "update"),
    _x("number", "dose raised", "I take 50 mg of sertraline every morning.",
       "My doctor raised my sertraline to 100 mg a day.", "update"),
    _x("number", "team size", "Our team has 7 engineers.",
       "We're 9 engineers on the team now after two new hires.", "update"),
    _x("number", "commute shorter", "My commute takes 45 minutes each way.",
       "My commute is 20 minutes since we moved closer to the office.", "update"),
    _x("number", "leave days left", "I have 14 days of annual leave left this year.",
       "After the Easter trip I've got 9 days of leave left this year.", "update"),
    _x("number", "resting heart rate", "My resting heart rate is around 68.",
       "Resting heart rate's down to 58 since I started running.", "update"),
    _x("number", "kids' bedtime", "The kids' bedtime is 8pm.",
       "We moved the kids' bedtime to 7:30pm.", "update"),
    _x("number", "golf handicap", "My golf handicap is 18.",
       "Good season on the course, my handicap is 14 now.", "update"),
    _x("number", "chickens fewer", "We keep 3 chickens in the garden.",
       "A fox got one of our chickens, so we're down to 2.", "update"),
    _x("number", "credit limit raised", "My credit card limit is $5,000.",
       "The bank raised my credit card limit to $8,000.", "update"),
    _x("number", "phone contract repeat", "I pay £45 a month for my phone contract.",
       "My phone contract costs forty-five pounds monthly.", "same"),
    # --- indirect corrections ---------------------------------------------------------------------
    _x("indirect", "turns out, flight date", "My flight home is on the 14th.",
       "Turns out my flight home is on the 15th, I misread the booking.", "update"),
    _x("indirect", "they moved the clinic", "My physiotherapy clinic is on Parkstraat.",
       "They moved the physio clinic to Stationsplein over the summer.", "update"),
    _x("indirect", "had it wrong, nephew's age", "My nephew Tomás is 6.",
       "I had it wrong, Tomás is 7, his birthday was in May.", "update"),
    _x("indirect", "scratch that, book club day", "Book club meets on the first Tuesday of the month.",
       "Scratch that, book club is on the first Wednesday of the month.", "update"),
    _x("indirect", "it's actually, bank", "My bank is Monzo.",
       "It's actually Starling I bank with; Monzo was my old account.", "update"),
    _x("indirect", "test came back, pollen", "I'm allergic to birch pollen.",
       "The allergy test came back and it's grass pollen, not birch.", "update"),
    _x("indirect", "coach moved training", "My son's football training is at 5pm on Thursdays.",
       "The coach moved Thursday football training to 6pm.", "update"),
    _x("indirect", "just checked, passport", "My passport expires in 2029.",
       "Just checked, my passport actually runs out in 2027.", "update"),
    _x("indirect", "wait, skip-level", "My manager is Priya.",
       "Wait, Priya is my skip-level; my actual manager is Dan.", "update"),
    _x("indirect", "dropped both", ("I go to the gym on Mondays and Thursdays.",
       "I swim on Saturday mornings."), "I've dropped both the gym and the Saturday swim, I only cycle now.",
       "update", 1),
    _x("indirect", "turns out, adds a class", "My yoga class is on Saturdays at 10am.",
       "Turns out the studio also runs a Sunday class at 10am, I might try it.", "add"),
    # --- a change inside a longer note, and notes that change nothing ------------------------------
    _x("inside", "move inside a busy-week note", "I live in Aarhus.",
       "Busy week. Started the new job at Vestas on Monday and the onboarding is intense. We also finished "
       "the move, so we live in Aalborg now. The kids like their new school.", "update"),
    _x("inside", "piano day inside a kids note", "My daughter Noor's piano lessons are on Wednesdays.",
       "Quick update on the kids: Noor passed her swimming badge. Her piano lessons moved to Fridays because "
       "the teacher changed her schedule. Sami still has football on Tuesdays.", "update"),
    _x("inside", "medication inside a GP note", "My blood pressure medication is amlodipine 5 mg.",
       "Saw Dr. Patel today. My cholesterol is fine. She switched my blood pressure medication from "
       "amlodipine to losartan 50 mg. Next check-up in six months.", "update"),
    _x("inside", "eating meat again inside a dinner note", "I'm vegetarian.",
       "Dinner at Rosa's went great. She made lamb and, honestly, I've started eating meat again over the "
       "past month. Her brother is moving to Seville. We're meeting again in June.", "update"),
    _x("inside", "gym days inside a rota note", "My gym sessions are Monday, Wednesday and Friday mornings.",
       "New rota at the hospital from next month: nights every other week. That means the gym moves to "
       "Tuesday and Thursday evenings. Mum will take the dog on my night weeks.", "update"),
    _x("inside", "house city inside a mortgage note",
       "My partner and I are saving to buy a house in Bristol.",
       "The mortgage adviser meeting went well. We've decided to buy in Bath instead of Bristol, since "
       "Tom's job moved there. Our deposit target is £40k. Two viewings on Saturday.", "update"),
    _x("inside", "WFH days inside an office note", "My work-from-home days are Monday and Friday.",
       "The office reorganised the desks and I'm on the third floor now, near the kitchen. My WFH days "
       "changed to Tuesday and Thursday. The new coffee machine is awful.", "update"),
    _x("inside", "colleague leaves, not me (add)", "I work at Ørsted as a data analyst.",
       "Long day. The Ørsted team offsite was in Fredericia, lots of forecasting workshops. My colleague "
       "Jens is leaving for Equinor next month. I'm hoping to take over his dashboards.", "add"),
    _x("inside", "car serviced, car unchanged (add)", "My car is a grey Toyota Yaris.",
       "Took the Yaris in for its service today and they replaced the brake pads. It cost €240. I also "
       "booked winter tyres for November.", "add"),
    _x("inside", "allergy mentioned, still holds (add)", "I'm allergic to penicillin.",
       "Had a sinus infection this week. The GP prescribed clarithromycin because of my penicillin "
       "allergy. I was off work two days and feel better now.", "add"),
    _x("inside", "earlier whole note, one fact later changed (add: note keeps other facts)",
       "We moved to Girona in the spring. I work from home for a Dutch logistics firm. My partner Júlia "
       "teaches at the university. We have a dog called Turró.",
       "Júlia left the university and now works at a biotech startup in Barcelona.", "add"),
    _x("inside", "earlier whole note, schedule later changed (add: note keeps other facts)",
       "About me: I'm a secondary school maths teacher. I'm married to Chidi and we have twin boys. "
       "I sing in a choir that rehearses on Tuesday evenings.",
       "The choir moved its rehearsals to Wednesday evenings.", "add"),
    # --- other languages --------------------------------------------------------------------------
    _x("de:lang", "umgezogen", "Ich wohne in Freiburg.", "Wir sind im Sommer nach Karlsruhe gezogen.",
       "update"),
    _x("de:lang", "Training verlegt", "Mein Volleyballtraining ist dienstags um 19 Uhr.",
       "Das Volleyballtraining wurde auf donnerstags um 18 Uhr verlegt.", "update"),
    _x("de:lang", "Zahnarzt wiederholt", "Mein Zahnarzt ist Dr. Weber in der Altstadt.",
       "Ich gehe zu Dr. Weber in der Altstadt, er ist mein Zahnarzt.", "same"),
    _x("de:lang", "Auto der Frau", "Ich fahre einen VW Golf.", "Meine Frau fährt einen Audi A3.", "add"),
    _x("es:lang", "turno cambiado", "Trabajo en el turno de mañana en el hospital.",
       "Desde enero me pasaron al turno de noche en el hospital.", "update"),
    _x("es:lang", "alquiler sube", "Mi alquiler es de 780 euros al mes.",
       "Ahora pago 820 euros al mes de alquiler.", "update"),
    _x("es:lang", "hermano repetido", "Mi hermano Pablo vive en Bilbao.",
       "Pablo, mi hermano, vive en Bilbao.", "same"),
    _x("es:lang", "plan de prueba", "Soy alérgica a los frutos secos.",
       "Estoy pensando en hacerme una prueba de alergia al marisco.", "add"),
    _x("fr:lang", "quitté l'employeur", "Je travaille chez Decathlon à Lille.",
       "J'ai quitté Decathlon, je travaille maintenant chez Leroy Merlin.", "update"),
    _x("fr:lang", "je me suis trompée", "Mon cours de natation est le lundi soir.",
       "En fait, le cours de natation est le mardi soir, je me suis trompée.", "update"),
    _x("fr:lang", "médecin répété", "Mon médecin traitant est le docteur Morel.",
       "Le docteur Morel est mon médecin traitant.", "same"),
    _x("fr:lang", "épisode passé", "J'habite à Nantes.", "J'ai habité à Rennes pendant mes études.", "add"),
    _x("it:lang", "trasferita", "Vivo a Bologna.", "A settembre mi sono trasferita a Torino.", "update"),
    _x("pt:lang", "segundo animal", "Tenho um cão chamado Bolinha.", "Também temos uma gata, a Mimi.",
       "add"),
    # --- must not supersede -----------------------------------------------------------------------
    _x("must-not", "husband's blood type", "My blood type is O negative.",
       "My husband's blood type is A positive.", "add"),
    _x("must-not", "second dog", "I have a border collie called Fennel.",
       "We just got a second dog, a whippet called Biscuit.", "add"),
    _x("must-not", "second language", "I speak Portuguese fluently.", "I also speak decent Swahili.", "add"),
    _x("must-not", "second instrument", "I play the cello.", "I've started learning the ukulele as well.",
       "add"),
    _x("must-not", "thinking of moving", "I live in Sheffield.",
       "We're thinking of moving to Norwich next year.", "add"),
    _x("must-not", "wish for a car", "I drive a Mazda 3.", "I'd love to get a Volvo XC40 someday.", "add"),
    _x("must-not", "wondering about switching", "My internet provider is BT.",
       "I'm wondering whether to switch to Zen Internet.", "add"),
    _x("must-not", "lived there before", "I live in Dublin.", "I lived in Lyon from 2016 to 2018.", "add"),
    _x("must-not", "meat as a kid", "I'm vegetarian.", "I ate meat as a kid, until I was about 14.", "add"),
    _x("must-not", "wife's car", "My car is a Ford Focus.", "My wife's car is a Honda Jazz.", "add"),
    _x("must-not", "work vs personal phone", "My work phone number is 07700 900123.",
       "My personal phone number is 07700 900456.", "add"),
    _x("must-not", "personal vs work laptop", "My personal laptop is a ThinkPad X1 Carbon.",
       "My work laptop is a MacBook Pro.", "add"),
    _x("must-not", "away this week", "I live in Manchester.", "I'm in Valencia this week for a conference.",
       "add"),
    _x("must-not", "one bad night", "I usually sleep about 7 hours a night.",
       "Barely slept 4 hours last night, the baby is teething.", "add"),
    _x("must-not", "strike day", "I take the 7:42 train to work.",
       "The trains are on strike tomorrow, so I'm driving in.", "add"),
    _x("must-not", "if I ever leave", "I work as a pharmacist at Boots.",
       "If I ever leave Boots, I'd want to work in a hospital pharmacy.", "add"),
    _x("must-not", "rent of a bigger flat", "My rent is £1,050 a month.",
       "If we took the bigger flat upstairs, the rent would be £1,400.", "add"),
    _x("must-not", "dad's quote", "I support Everton.",
       "My dad always says, 'Liverpool are the only team in this city.'", "add"),
    _x("must-not", "son's allergy", "My daughter Amira is allergic to eggs.",
       "My son Yusuf is allergic to sesame.", "add"),
    _x("must-not", "wife's manager", "My manager is Oluwaseun.",
       "My wife's manager is called Declan.", "add"),
    _x("must-not", "sister moved, not brother", "My brother lives in Glasgow.",
       "My sister just moved to Edinburgh.", "add"),
    _x("must-not", "still there, with a new detail", "I work at Arup.",
       "I've been at Arup six years now; I'm on the rail bridges team.", "add"),
    # --- the same fact again ----------------------------------------------------------------------
    _x("same", "night owl", "I'm a night owl; I do my best work after 10pm.",
       "I work best late at night, after ten.", "same"),
    _x("same", "shellfish agent then first person", "User is allergic to shellfish.",
       "I have a shellfish allergy.", "same"),
    _x("same", "WhatsApp first person then agent", "I prefer to be contacted on WhatsApp.",
       "User prefers WhatsApp as their contact channel.", "same"),
    _x("same", "son's school year", "My son Leo is in Year 4.", "Leo's in Year 4 this year.", "same"),
    _x("same", "e-bike commute", "I commute by e-bike.", "I ride my e-bike to work.", "same"),
    _x("same", "partner's name", "My partner's name is Rhiannon.", "Rhiannon is my partner.", "same"),
    _x("same", "standing desk", "I use a standing desk at home.",
       "At home I work at a standing desk.", "same"),
    _x("same", "sister vet", "My sister Hana is a vet in Norwich.",
       "Hana, my sister, works as a vet in Norwich.", "same"),
)  # fmt: skip
