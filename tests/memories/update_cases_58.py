"""Batch 58a of update cases, written blind on 7 December 2026 (stop 58), before any run.

The helper who wrote it had read neither the update engine nor any earlier case, only the `Case`
shape and how a batch is declared, so the batch measures how the engine generalises, not how it
fits cases it was tuned on. What it tests, by class (`cls`, with a language prefix where not English):

- `agent`: memories written in the third person by an AI agent's memory tool ("User lives in ..."),
  mixed with first-person statements either side: changes, reworded repeats, other people's facts;
- `number`: a standing numeric value changed (rent, dose, count, time, score), with or without a verb
  of change;
- `indirect`: corrections said indirectly ("turns out", "I had it wrong", "scratch that", "they moved");
- `inside`: a change inside a longer note about other things, and notes that hold no change; two cases
  whose EARLIER statement is a whole note with one fact later changed expect "add" (the note's other
  facts still hold, so the note row stays current), and say so in their names;
- `de:lang`, `es:lang`, `fr:lang`, `it:lang`, `pt:lang`: changes, repeats and non-changes;
- `must-not`: later statements that look like a change but are not (another person's value, a second
  value of a many-valued fact, plans, wishes, questions, past episodes, another thing's attribute,
  temporary states, hypotheticals, quotes, the same value again with a new detail);
- `same`: paraphrases and repeats, first person against third-person agent phrasing.
"""

from __future__ import annotations

from tests.memories.update_cases import Case
from tests.memories.update_cases_40 import _b

_k = _b("58a")

BATCH_58A: tuple[Case, ...] = (
    # --- agent-written memories ---------------------------------------------------------------------
    _k("agent", "agent city, first-person move", "User lives in Bremen.",
       "I moved to Leipzig in September.", "update"),
    _k("agent", "sister's job changed", "The user's sister Ana is a nurse in Porto.",
       "My sister Ana left nursing and now teaches biology in Porto.", "update"),
    _k("agent", "dark mode to light mode", "User prefers dark mode in all apps.",
       "User now prefers light mode in all apps; dark mode strains their eyes.", "update"),
    _k("agent", "shellfish allergy repeated first person", "User is allergic to shellfish.",
       "I'm allergic to shellfish.", "same"),
    _k("agent", "daughter's name repeated", "The user's daughter is named Mira.",
       "My daughter's name is Mira.", "same"),
    _k("agent", "husband's job is another fact", "User works as a dental hygienist.",
       "User's husband works as an electrician.", "add"),
    _k("agent", "son's car is another fact", "User drives a 2016 Skoda Octavia.",
       "User's son just bought a Fiat Panda.", "add"),
    _k("agent", "first-person night shift, agent day shift", "I'm on the night shift at the warehouse.",
       "User has moved from night shifts to day shifts at the warehouse.", "update"),
    _k("agent", "no longer vegetarian", "User is vegetarian.",
       "User started eating fish again and is no longer vegetarian.", "update"),
    _k("agent", "preferred name Kit", "User's preferred name is Katherine.",
       "User asks to be called Kit from now on.", "update"),
    _k("agent", "second language learned", "User is learning Japanese.",
       "User is also learning Korean.", "add"),
    _k("agent", "bullet points reworded", "User prefers replies in bullet points.",
       "The user likes answers formatted as bullet points.", "same"),
    _k("agent", "first-person watch, agent replacement", "I use a Garmin Forerunner 255 for running.",
       "User replaced their Garmin with a Coros Pace 3 for running.", "update"),
    _k("agent", "mentor beside manager", "User's manager is Priya Raman.",
       "User's mentor at work is Daniel Osei.", "add"),
    _k("agent", "landlord changed after sale", "The user's landlord is Mr. Haddad.",
       "The building was sold; the user's landlord is now Greystone Lettings.", "update"),
    _k("agent", "move and job together supersede both",
       ("User lives in Bremen.", "User works at the Bremen port office."),
       "I moved to Hamburg and now work for the Hamburg port authority.", "update", 1),
    # --- numbers --------------------------------------------------------------------------------------
    _k("number", "rent without a verb", "My rent is £950 a month.", "Rent's £1,020 since the renewal.",
       "update"),
    _k("number", "dose raised, vitamin untouched",
       ("I take 50 mg of sertraline every morning.", "I take vitamin D every day."),
       "My doctor raised my sertraline to 100 mg.", "update"),
    _k("number", "cat count", "We have 3 cats.", "We have 4 cats now that we adopted Biscuit.", "update"),
    _k("number", "commute minutes", "My commute is 40 minutes each way.",
       "Since the new tram line opened, my commute takes 25 minutes each way.", "update"),
    _k("number", "golf handicap", "My golf handicap is 18.", "Got my golf handicap down to 14.", "update"),
    _k("number", "school start time", "The kids' school starts at 8:45.",
       "The kids' school starts at 8:30 from this term.", "update"),
    _k("number", "phone plan price", "My monthly phone plan costs $35.", "My phone plan is $42 a month now.",
       "update"),
    _k("number", "hours of sleep", "I sleep about 6 hours a night.",
       "I'm sleeping around 8 hours a night these days.", "update"),
    _k("number", "laptop RAM", "My laptop has 16 GB of RAM.", "I upgraded my laptop to 32 GB of RAM.",
       "update"),
    _k("number", "net pay after raise", "I earn €3,400 net a month.",
       "After the raise my net pay is €3,750 a month.", "update"),
    _k("number", "parking cost is another amount", "My rent is £950 a month.",
       "My parking space costs £60 a month.", "add"),
    # --- indirect corrections ---------------------------------------------------------------------------
    _k("indirect", "turns out Wednesday", "The dentist appointment is on Tuesday at 3pm.",
       "Turns out the dentist appointment is Wednesday at 3pm, I misread the letter.", "update"),
    _k("indirect", "I had it wrong, Alicante", "My cousin Felipe lives in Valencia.",
       "I had it wrong, Felipe lives in Alicante, not Valencia.", "update"),
    _k("indirect", "scratch that, Monday", "Book club meets on the first Thursday of the month.",
       "Scratch that, book club meets on the first Monday of the month now.", "update"),
    _k("indirect", "boss actually Gerard", "My boss's name is Gareth.",
       "My boss's name is actually Gerard, not Gareth, I always mix them up.", "update"),
    _k("indirect", "they moved the offsite", "The team offsite is in Brighton.",
       "They moved the team offsite to Bath.", "update"),
    _k("indirect", "blood test says O", "My blood type is A positive.",
       "The hospital test says my blood type is actually O positive.", "update"),
    _k("indirect", "oh wait, Luton", "My flight home lands at Stansted.",
       "Oh wait, my flight home lands at Luton, not Stansted.", "update"),
    _k("indirect", "venue fell through", "Our wedding venue is Hartwell House.",
       "We couldn't get Hartwell House in the end, so the wedding is at Stoke Place.", "update"),
    _k("indirect", "plumber rang, Monday instead", "The plumber is coming on Friday morning.",
       "The plumber rang, he's coming Monday morning instead.", "update"),
    _k("indirect", "just checked, 2029", "My passport expires in 2027.",
       "Just checked, my passport actually expires in 2029.", "update"),
    _k("indirect", "Dad reminded me, the 4th", "Mum's birthday is on the 14th of May.",
       "Dad reminded me Mum's birthday is the 4th of May, not the 14th.", "update"),
    # --- a change inside a longer note, and notes without one ----------------------------------------------
    _k("inside", "new job inside a catch-up note", "I work at Northwind Logistics.",
       "Quick catch-up. The kids started swimming lessons on Saturdays. I handed in my notice at "
       "Northwind Logistics and I start at Calloway Foods on Monday. Also my knee is much better.",
       "update"),
    _k("inside", "dentist changed inside admin note", "My dentist is Dr. Okafor.",
       "Admin day. Renewed the car insurance with Aviva. Dr. Okafor retired, so my dentist is now "
       "Dr. Lindqvist at the same practice. Ordered new glasses too.", "update"),
    _k("inside", "yoga day inside weekly plan", "I go to yoga on Wednesday evenings.",
       "Weekly plan. Monday is batch cooking. Yoga has moved to Thursday evenings. Friday I collect my "
       "niece from school.", "update"),
    _k("inside", "trip note leaves home alone", "I live in Graz.",
       "Weekend recap. We drove to Linz to see my aunt Hedwig. The weather was awful. We stayed two "
       "nights at a guesthouse by the river.", "add"),
    _k("inside", "football details beside the fact", "My son Teo plays football on Saturdays.",
       "Notes for later. Teo's football coach is called Marcus. The season ends in June. We need new "
       "boots in size 4 before then.", "add"),
    _k("inside", "earlier whole note, one fact moves: note row stays (add)",
       "About me: I'm a physiotherapist in Cork. I have two dogs, Bran and Sully. I'm training for the "
       "Dublin marathon. I don't drink alcohol.",
       "I've moved from Cork to Galway.", "add"),
    _k("inside", "single-sentence job, move inside update note", "I'm a physiotherapist in Cork.",
       "Update on things. Moved to Galway last month and I'm now a physio at University Hospital "
       "Galway. Both dogs settled in fine. Marathon training is back on track.", "update"),
    _k("inside", "GP surgery changed inside note", "My GP is at the Westgate Surgery.",
       "Notes from today. Westgate closed its list, so I registered with Millbrook Medical Centre and "
       "that's my GP surgery now. Booked a flu jab for the 12th. Need to send them my old records.",
       "update"),
    _k("inside", "partner details beside the fact", "My partner Ilse is a graphic designer.",
       "Things to remember. Ilse's studio is on Brick Lane. She works Tuesday to Friday. She hates "
       "being called before 10am.", "add"),
    _k("inside", "bank changed, credit card kept",
       ("I bank with Monzo.", "My credit card is with Barclaycard."),
       "Money housekeeping done. I closed my Monzo account and moved everything to Starling. "
       "Barclaycard stays as it is. Set up a standing order for the rent.", "update"),
    _k("inside", "earlier whole household note, bin night moves: note row stays (add)",
       "Household notes: the bins go out on Tuesday night, recycling every other Friday, and the "
       "boiler service is due in March.",
       "The bins go out on Wednesday night now.", "add"),
    _k("inside", "piano time inside week note", "My daughter's piano lesson is at 4:15 on Thursdays.",
       "Week sorted. Grocery delivery Sunday 9-10am. Piano moved to 5pm on Thursdays because the "
       "teacher has a new student. Parents' evening is on the 21st.", "update"),
    _k("inside", "cancelled train is an episode", "I take the 7:52 train to work.",
       "Today was chaos. The 7:52 was cancelled so I got the bus. I arrived late and missed the "
       "stand-up. My manager was fine about it.", "add"),
    # --- other languages ----------------------------------------------------------------------------------
    _k("de:lang", "umgezogen", "Ich wohne in Kassel.", "Seit Oktober wohne ich in Göttingen.", "update"),
    _k("de:lang", "Zahnarzt umformuliert", "Mein Zahnarzt ist Dr. Brandt.",
       "Mein Zahnarzt heißt Dr. Brandt.", "same"),
    _k("de:lang", "Sohn statt Tochter", "Meine Tochter spielt Cello.", "Mein Sohn spielt Trompete.", "add"),
    _k("de:lang", "Stunden aufgestockt", "Ich arbeite in Teilzeit, 25 Stunden pro Woche.",
       "Ich habe auf 32 Stunden pro Woche aufgestockt.", "update"),
    _k("es:lang", "hermano se mudó", "Mi hermano Javier vive en Sevilla.",
       "Mi hermano Javier se mudó a Málaga el mes pasado.", "update"),
    _k("es:lang", "alergia repetida", "Soy alérgica a los frutos secos.", "Tengo alergia a los frutos secos.",
       "same"),
    _k("es:lang", "coche del marido", "Mi coche es un Seat Ibiza.",
       "El coche de mi marido es un Toyota Corolla.", "add"),
    _k("es:lang", "alquiler sube", "Pago 780 euros de alquiler al mes.",
       "Ahora pago 820 euros de alquiler al mes.", "update"),
    _k("fr:lang", "médecin traitant changé", "Mon médecin traitant est le docteur Lemaire.",
       "J'ai changé de médecin traitant : c'est maintenant la docteure Faure.", "update"),
    _k("fr:lang", "vélo reformulé", "Je fais du vélo le dimanche matin.",
       "Le dimanche matin, je fais du vélo.", "same"),
    _k("fr:lang", "à Bordeaux cette semaine", "J'habite à Nantes.",
       "Je suis à Bordeaux cette semaine pour le travail.", "add"),
    _k("fr:lang", "en fait le jeudi", "Le cours de danse de ma fille est le mercredi.",
       "En fait, le cours de danse de ma fille est le jeudi.", "update"),
    _k("it:lang", "da farmacista a insegnante", "Lavoro come farmacista a Torino.",
       "Ho lasciato la farmacia e ora insegno chimica a Torino.", "update"),
    _k("pt:lang", "irmã mora em Braga", "Eu moro em Coimbra.", "A minha irmã mora em Braga.", "add"),
    # --- must not supersede -------------------------------------------------------------------------------
    _k("must-not", "husband's birthday", "My birthday is on 9 August.",
       "My husband's birthday is on 22 August.", "add"),
    _k("must-not", "a second pet", "I have a border collie called Juno.",
       "We also adopted a tabby cat called Pickle.", "add"),
    _k("must-not", "a second language", "I speak Portuguese.", "I speak Dutch as well.", "add"),
    _k("must-not", "thinking of moving", "I live in Nottingham.",
       "Thinking of moving to Sheffield next year.", "add"),
    _k("must-not", "a wish for another car", "I drive a Mazda 3.", "I'd love to get a Volvo estate one day.",
       "add"),
    _k("must-not", "a question about switching", "My energy supplier is Octopus.",
       "Should I switch my energy supplier to EDF?", "add"),
    _k("must-not", "a past year abroad", "I live in Dundee.", "I lived in Rome for a year in 2015.", "add"),
    _k("must-not", "wife's car insurance", "My car insurance renews in March.",
       "My wife's car insurance renews in October.", "add"),
    _k("must-not", "work phone beside personal phone", "My personal phone is a Pixel 7.",
       "My work phone is an iPhone 14.", "add"),
    _k("must-not", "in Tallinn this week", "I live in Bristol.", "I'm in Tallinn this week for a conference.",
       "add"),
    _k("must-not", "if I got the offer", "I work at Harlow Insurance.",
       "If I got the Edinburgh offer, I'd work at Baillie Gifford.", "add"),
    _k("must-not", "dad's quote about a team", "I support Celtic.",
       "My dad always said, 'Rangers are the only team worth supporting.'", "add"),
    _k("must-not", "same employer with a ward: both current", "I work at the Royal Infirmary.",
       "I work at the Royal Infirmary, mostly on the cardiology ward.", "add"),
    _k("must-not", "a second allergy", "I'm allergic to latex.", "I'm also allergic to ibuprofen.", "add"),
    _k("must-not", "younger son's school", "My older son goes to Ashfield Primary.",
       "My younger son goes to Brookvale Nursery.", "add"),
    _k("must-not", "locum last winter", "My GP is Dr. Sandhu.",
       "Last winter I saw Dr. Price because Dr. Sandhu was on leave.", "add"),
    _k("must-not", "home today for a strike", "I work from the Manchester office.",
       "I'm working from home today because of the train strike.", "add"),
    _k("must-not", "might try another gym", "My gym is The Foundry.",
       "I might try the new bouldering gym on Canal Street next week.", "add"),
    _k("must-not", "partner's steak", "I like my steak medium-rare.", "My partner likes her steak well done.",
       "add"),
    _k("must-not", "a second instrument", "I play the piano.",
       "I've started learning the ukulele too.", "add"),
    _k("must-not", "work desktop OS", "My laptop runs Windows 11.", "My desktop at work runs Ubuntu 22.04.",
       "add"),
    _k("must-not", "hypothetical meat", "I'm vegetarian.",
       "If I ever ate meat again, it would be my grandmother's goulash.", "add"),
    _k("must-not", "salary of a job applied for", "My salary is £48,000.",
       "The job I'm interviewing for pays £55,000.", "add"),
    # --- same fact again ------------------------------------------------------------------------------------
    _k("same", "left-handed, agent phrasing", "I'm left-handed.", "User is left-handed.", "same"),
    _k("same", "daughter's birth year reordered", "My daughter Lucía was born in 2019.",
       "Lucía, my daughter, was born in 2019.", "same"),
    _k("same", "firefighter reworded", "I'm a firefighter.", "I work as a firefighter.", "same"),
    _k("same", "coeliac, agent phrasing", "I have coeliac disease, so I avoid gluten.",
       "User has coeliac disease and avoids gluten.", "same"),
    _k("same", "mum in Aberdeen", "My mother lives in Aberdeen.", "Mum lives in Aberdeen.", "same"),
    _k("same", "car reworded", "I drive a grey Kia Niro.", "My car is a grey Kia Niro.", "same"),
    _k("same", "partner's name, agent then first person", "The user's partner is named Tomasz.",
       "My partner's name is Tomasz.", "same"),
    _k("same", "bedtime reworded", "I go to bed around 11pm.", "I usually go to sleep at about 11 at night.",
       "same"),
    _k("same", "teetotal", "I don't drink alcohol.", "I'm teetotal.", "same"),
)  # fmt: skip
