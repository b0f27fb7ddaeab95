"""Attack on the rules of the update engine added at stop 58 (commits c87f4b5 and 42b3081 of
`memories.pipeline`): an assistant's note about "the user" read in the person's own words
(`in_own_words`), two qualified attributes of one relation, a move that does not replace what one
does (`_other_relation`), a shared value alone being no shared subject, a relative's thing said with
"of", a word's "'s" dropped, Spanish third-person change verbs, a time with its part of day, someone
changing the speaker's own thing (`_acts_on_mine`), "X reminded me ..." (`_REMINDED_RE`), the new
endings, the clause that holds the value (`value_clauses`), "I've got", "every"/"each", "reach".

Written by a helper who did not build the rules (stop 58, 7 December 2026). Each row is (old, new,
the right verdict). Must-not-replace rows are pairs where the rules may hide a true fact (`update`
where `add` or `same` is right); should rows are changes and repeats the rules are meant to catch,
said in other words. The rows the rules get wrong are marked `xfail(strict=True)` with the reason:
they are the findings, not expected verdicts to change. When the file was written, 37 of 147 verdict
rows were wrong (17 of 70 must-not-replace: a true fact hidden; 20 of 77 should) and 7 of 13 direct
readings of `in_own_words`. Mended the same day (their marks removed): 15 of the 17 must-not rows (a
clause about someone else keeps its values and cues, only "reach me at" is a phone, a thing that
moved is no home, an agent's note left as written is no statement of the person's, a report verb
needs a clause, plural articles and "de mi trabajo" in Spanish), 5 should rows (a move replaces a
statement of the home itself; "best reached at") and 3 readings of `in_own_words`; the rest stay
marked with their reasons.

Pure rules with the real embedding model for the similarity the worker would measure (as
`test_subjects.py`), no database.
"""

from __future__ import annotations

import pytest

from memories.pipeline.language import in_own_words
from memories.pipeline.update import Verdict
from tests.memories.pipeline.test_subjects import _verdict

ADD, SAME, UPDATE = Verdict.ADD, Verdict.SAME, Verdict.UPDATE


def _fails(old: str, new: str, expected: Verdict, reason: str):
    return pytest.param(old, new, expected, marks=pytest.mark.xfail(strict=True, reason=reason))


def _misread(note: str, own: str, reason: str):
    return pytest.param(note, own, marks=pytest.mark.xfail(strict=True, reason=reason))


MUST_NOT_REPLACE = [
    # --- 1. an agent's note about "the user" ---
    # Trap: a question is no statement of a move.
    ("I live in Berlin.", "User asked whether they should move to Munich.", ADD),
    # Trap: a wish or a plan written as a note.
    ("I live in Berlin.", "User wants to move to Lisbon.", ADD),
    ("I live in Berlin.", "User plans to move to Lisbon next year.", ADD),
    ("I live in Berlin.", "User is thinking about moving to Munich.", ADD),
    # Trap: a relative's move reported by the user.
    ("I live in Berlin.", "User mentioned their sister moved to Munich.", ADD),
    ("I work at Siemens.", "User said their husband works at Bosch now.", ADD),
    # Trap: "they" of a note whose subject is others, not the user.
    ("I live in Berlin.", "User's friends say they are moving to Leeds.", ADD),
    ("I live in Berlin.", "User's sister says they moved to Munich.", ADD),
    # Trap: another user, users of a product, a product field.
    ("I live in Berlin.", "Another user lives in Munich.", ADD),
    ("I live in Berlin.", "Users in Germany are billed in euros.", ADD),
    ("My phone is a Pixel 7.", "The user's phone number field is now optional.", ADD),
    ("I live in Berlin.", "The user guide now lives in Notion.", ADD),
    # Trap: what the user reported about something else (a company, not the person).
    ("I live in Berlin.", "User said the company moved to Munich.", ADD),
    # Trap: "User groups", "The user base": a compound noun, not a note about the person.
    ("I live in Berlin.", "User groups moved to Munich.", ADD),
    ("I live in Berlin.", "The user base moved to Munich servers.", ADD),
    # Trap: a report verb with an object ("reported a rent of ...", "shared a job offer ...").
    ("My rent is £950 a month.", "User reported a rent of £1,020 for the flat they viewed.", ADD),
    ("My salary is €50,000.", "User shared a job offer with a salary of €80,000.", ADD),
    # Trap: a question the user had, written as "User's question was about ...".
    ("I live in Berlin.", "User's question was about moving to Munich.", ADD),
    # Trap: a note in Spanish about the users of an app.
    ("Vivo en Madrid.", "Los usuarios de la app viven ahora en Valencia.", ADD),
    ("Ich wohne in Berlin.", "Die Nutzerdaten liegen jetzt in Frankfurt.", ADD),
    # --- 2. qualified attributes ---
    ("My work number is 555-0101.", "My home number is 555-0199.", ADD),
    ("My work email is ana@firm.com.", "My email is ana@mail.com now.", ADD),
    ("I earn €60,000 gross a year.", "My net salary is €3,400 a month.", ADD),
    ("My mobile number is 555-0101.", "My work mobile number is 555-0199.", ADD),
    ("My salary is €50,000 before tax.", "My take-home pay is €3,100 a month.", ADD),
    # --- 3. a move beside what one does ---
    ("I teach at a school in Cork.", "I've moved from Cork to Galway.", ADD),
    ("My office is in Cork.", "I've moved from Cork to Galway.", ADD),
    ("I work in Cork.", "I've moved from Cork to Galway.", ADD),
    ("I'm a student at UCC in Cork.", "I've moved to Galway.", ADD),
    ("I'm from Cork originally.", "I've moved to Galway.", ADD),
    # Trap: the speaker's company moved, the speaker did not.
    ("I live in Berlin.", "My company moved to Munich.", ADD),
    # --- 4. a shared value alone ---
    ("My gym class is at 18:00 on Tuesdays.", "The 18:00 bus was late so I missed the gym class.", ADD),
    ("I weigh 80 kg.", "My suitcase weighed 80 kg at the airport.", ADD),
    ("My rent is £950 a month.", "I paid £950 for the new sofa.", ADD),
    # --- 5. a relative's thing said with "of" ---
    ("Mein Auto ist ein Golf.", "Das Auto von meinem Mann ist ein Passat.", ADD),
    ("Ma voiture est une Clio.", "La voiture de ma sœur est une Peugeot 208.", ADD),
    ("Mi casa está en Sevilla.", "La casa de mi madre está en Cádiz.", ADD),
    ("Vivo en Madrid.", "El piso de mi hermano está en Valencia.", ADD),
    ("Mi número es 600111222.", "El número de mi hermana es 600333444.", ADD),
    # Trap: a company car ("the car of my work") is not the speaker's own car.
    ("Mi coche es un Seat Ibiza.", "El coche de mi trabajo es un Toyota.", ADD),
    # --- 6. "'s" dropped ---
    ("My rent is £950 a month.", "Tom's rent is £1,020.", ADD),
    ("My car is a Golf.", "Dad's car's a Tesla now.", ADD),
    ("I live in Berlin.", "Anna's moved to Munich.", ADD),
    _fails(
        "I live in Berlin.",
        "Jo's moved to Munich.",
        ADD,
        "'Jo' is no known first name, so 'Jo's moved' is read as a move of the speaker",
    ),
    # --- 7. Spanish third-person change verbs ---
    ("Vivo en Madrid.", "Mi hermano se mudó a Valencia.", ADD),
    ("Trabajo en Telefónica.", "Mi marido dejó su trabajo en Repsol.", ADD),
    ("Trabajo en Telefónica.", "Mi jefe renunció la semana pasada.", ADD),
    ("Mi coche es un Seat Ibiza.", "Mi vecino vendió su coche.", ADD),
    ("Vivo en Madrid.", "La empresa se mudó a Barcelona.", ADD),
    # --- 9. someone changing the speaker's own thing ---
    ("My mum takes 50 mg of sertraline.", "My doctor raised my sertraline to 100 mg.", ADD),
    ("I take 50 mg of sertraline.", "My doctor raised my mum's sertraline to 100 mg.", ADD),
    ("My rent is £950 a month.", "My landlord raised my brother's rent to £1,020.", ADD),
    ("My salary is €50,000.", "My boss changed my title to Senior Engineer.", ADD),
    # --- 10. "X reminded me ..." ---
    ("I work at Siemens.", "Tom reminded me he works at Bosch now.", ADD),
    ("My car is a Golf.", "Dad reminded me his car is a Tesla now.", ADD),
    ("I live in Berlin.", "My sister reminded me she moved to Munich.", ADD),
    # --- 11. endings ---
    ("I work at Siemens.", "My husband handed in his notice at Bosch.", ADD),
    ("I have an account with Barclays.", "My mum closed her Barclays account.", ADD),
    ("I work at Siemens.", "My manager resigned.", ADD),
    ("I have a Netflix account.", "I closed my Barclays account.", ADD),
    # --- 12. the clause that holds the value ---
    ("My parking spot is B12.", "My brother got a new job, his parking spot is now C4.", ADD),
    ("I weigh 80 kg.", "I've started lifting, and my bench press is now 80 kg.", ADD),
    _fails(
        "My parking spot is B12.",
        "My parking spot is B12, my wife's parking spot is now C4.",
        ADD,
        "value_clauses: the wife's clause repeats the frame 'parking spot' and the statement has a cue, "
        "so her spot replaces the speaker's, which the same statement confirms",
    ),
    ("My flight is at 6pm.", "My flight is still at 6pm, but Tom's flight moved to 9pm.", ADD),
    ("My rent is £950 a month.", "My rent is £950, but my sister's rent went up to £1,100.", ADD),
    # --- 13. "reach" a word of the phone relation ---
    ("My number is 555-0101.", "You can reach my wife at 555-0199.", ADD),
    ("My number is 555-0101.", "You can reach my office at 555-0199.", ADD),
    ("My number is 555-0101.", "I couldn't reach the plumber at 555-0199.", ADD),
    ("My phone is a Pixel 7.", "I can't reach the top shelf, I'm 5 feet tall.", ADD),
    # --- 13. "every" a light word: the one who is called still counts ---
    ("I call my mum every Sunday.", "I call my dad every Sunday.", ADD),
]


SHOULD = [
    # --- 1. an agent's note about "the user" ---
    ("I live in Berlin.", "User mentioned they moved to Munich last month.", UPDATE),
    ("I work at Siemens.", "The user recently started working at Bosch.", UPDATE),
    ("I live in Berlin.", "User has relocated to Munich.", UPDATE),
    ("I live in Berlin.", "User told me they've moved to Munich.", UPDATE),
    ("My sister lives in Oslo.", "The user's sister moved to Bergen.", UPDATE),
    ("I have two cats.", "User has two cats.", SAME),
    ("I live in Berlin.", "User clarified that they live in Munich, not Berlin.", UPDATE),
    ("I live in Berlin.", "User confirmed they moved to Munich.", UPDATE),
    ("I weigh 80 kg.", "User's weight is now 76 kg.", UPDATE),
    ("My rent is £950 a month.", "User's rent went up to £1,020.", UPDATE),
    ("My partner is Tom.", "User's partner is now Alex.", UPDATE),
    _fails(
        "I work at Siemens.",
        "User now works at Bosch.",
        UPDATE,
        "the frame is read in own words ('I now work at Bosch', which passes), but the similarity is "
        "measured on the note as written and falls below RELATED",
    ),
    _fails(
        "I work at Siemens.",
        "User mentioned they now work at Bosch.",
        UPDATE,
        "as above: one frame with 'I now work at Bosch', but the note's wording is too far by meaning",
    ),
    _fails(
        "I live in Berlin.",
        "The user is now based in Munich.",
        UPDATE,
        "'I'm now based in Munich' passes; the note as written is too far by meaning",
    ),
    _fails(
        "I drive a Golf.",
        "User has switched to a Tesla.",
        UPDATE,
        "'I have switched to a Tesla' passes; the note as written is too far by meaning",
    ),
    # Agent notes in German, Spanish, French.
    ("Ich arbeite bei Siemens.", "Der Nutzer arbeitet jetzt bei Bosch.", UPDATE),
    ("Trabajo en Telefónica.", "El usuario ahora trabaja en Repsol.", UPDATE),
    ("Je travaille chez Renault.", "L'utilisateur travaille maintenant chez Peugeot.", UPDATE),
    ("Ich wohne in Berlin.", "Die Nutzerin ist nach München gezogen.", UPDATE),
    ("J'habite à Paris.", "L'utilisateur a déménagé à Lyon.", UPDATE),
    _fails(
        "Vivo en Madrid.",
        "El usuario se mudó a Valencia.",
        UPDATE,
        "in_own_words reads English notes only: 'usuario' stays a frame word the prior lacks, and "
        "'se mudó' names no home relation, so the move stands beside 'Vivo en Madrid'",
    ),
    # --- 2. qualified attributes ---
    ("My work phone is 555-0101.", "My work phone number is 555-0199 now.", UPDATE),
    ("My rent is £950 a month.", "My monthly rent is £1,020 now.", UPDATE),
    ("I earn €3,400 net a month and my gross is €5,000.", "My gross pay is €5,400 now.", UPDATE),
    _fails(
        "My office phone is 555-0101, my personal phone is 555-0102.",
        "My personal phone is 555-0199 now.",
        UPDATE,
        "a prior with two qualified phones has one attribute (the first, 'office'), so the personal "
        "phone's change is another attribute",
    ),
    # --- 3. a move replaces where one lives, said without "live" ---
    ("I've lived in Cork for ten years.", "I moved to Galway.", UPDATE),
    ("My home is in Cork.", "I've moved from Cork to Galway.", UPDATE),
    ("I rent a flat in Cork.", "I've moved from Cork to Galway.", UPDATE),
    ("My flat is in Cork.", "We moved to Galway in March.", UPDATE),
    ("My address is 5 Main St, Cork.", "I've moved to 12 Shop St, Galway.", UPDATE),
    # --- 4. a shared value with a change of the same thing ---
    ("My yoga class is at 7:00.", "My yoga class moved to 7:30.", UPDATE),
    ("I wake up at 6:00.", "I've started waking up at 5:30.", UPDATE),
    ("My standup is at 9:30.", "Standup got moved to 10:00.", UPDATE),
    _fails(
        "My train leaves at 7:52.",
        "The 7:52 was moved to 8:05.",
        UPDATE,
        "the train is named only by its time ('moved' read as the home relation, no frame word): what "
        "both share is only a value, so (rule 4) the move of that very train ends nothing",
    ),
    # --- 5. a relative's thing said with "of" ---
    ("El coche de mi marido es un Seat Ibiza.", "El coche de mi marido es ahora un Toyota Corolla.", UPDATE),
    ("La casa de mis padres está en Cádiz.", "Mis padres se mudaron a Málaga.", UPDATE),
    # --- 6. "'s" dropped ---
    ("My car is a Golf.", "The car's a Tesla now.", UPDATE),
    ("My commute is 40 minutes.", "Commute's down to 25 minutes.", UPDATE),
    ("My salary is €50,000.", "Salary's €55,000 since April.", UPDATE),
    ("My flight is at 6pm.", "Flight's at 8pm now.", UPDATE),
    # --- 7. Spanish third-person change verbs ---
    ("Mi hermana trabaja en Zara.", "Mi hermana dejó Zara y empezó en Mango.", UPDATE),
    ("Mi padre trabaja en Repsol.", "Mi padre renunció a Repsol.", UPDATE),
    ("Mi hermana trabaja en Zara.", "Mi hermana cambió de trabajo, ahora está en Mango.", UPDATE),
    _fails(
        "Mi hermano Javier vive en Sevilla.",
        "Javier se mudó a Málaga.",
        UPDATE,
        "'se mudó' is now a change, but 'Mi hermano Javier' is user:brother (the name not kept) and "
        "'Javier' alone is read as the speaker: two subjects",
    ),
    _fails(
        "Mi madre tiene un Seat Ibiza.",
        "Mi madre vendió el Seat y compró un Toyota.",
        UPDATE,
        "'vendió' is a change, but 'tiene' and 'vendió ... compró' share no frame word",
    ),
    # --- 8. a time with its part of day ---
    ("I get up at 6:30.", "I get up at 7 in the morning now.", UPDATE),
    ("I go to bed at 23:00.", "I now go to bed at 10 at night.", UPDATE),
    ("I go to bed at 11pm.", "I go to bed at 12 at night now.", UPDATE),
    _fails(
        "I go to bed at 11pm.",
        "I go to bed at 11 at night.",
        SAME,
        "both are 23:00, but the words compared for a repeat keep '11pm' against '11 ... night'",
    ),
    _fails(
        "I get up at 6:30am.",
        "I get up at 6.30 in the morning.",
        SAME,
        "both are 06:30, but the words keep '6:30am' against '6.30 ... morning': no repeat",
    ),
    _fails(
        "My shift starts at 2 in the afternoon.",
        "My shift starts at 14:00.",
        SAME,
        "both are 14:00, but the values keep the raw '2' beside the time: no repeat",
    ),
    _fails(
        "I walk the dog at 7pm.",
        "I walk the dog at 7 in the evening.",
        SAME,
        "both are 19:00, but the words keep '7pm' against '7 ... evening': no repeat",
    ),
    # --- 9. someone changing the speaker's own thing ---
    ("My rent is £950 a month.", "My landlord put my rent up to £1,020.", UPDATE),
    ("My salary is €50,000.", "My boss raised my salary to €55,000.", UPDATE),
    ("My sister takes 50 mg of sertraline.", "My sister's doctor raised her dose to 100 mg.", UPDATE),
    _fails(
        "My dentist appointment is on May 3.",
        "My dentist moved my appointment to May 10.",
        UPDATE,
        "the prior 'My dentist appointment' is read as about the dentist (user:dentist), and 'moved' "
        "adds the home relation: the speaker's moved appointment is another subject",
    ),
    # --- 10. "X reminded me ..." ---
    (
        "My passport expires in 2027.",
        "My wife reminded me that my passport expires in 2026, not 2027.",
        UPDATE,
    ),
    ("Mum's birthday is on May 14.", "Dad reminded me that Mum's birthday is on May 14.", SAME),
    ("My rent is £950.", "My landlord reminded me the rent is £1,020 from May.", UPDATE),
    _fails(
        "My flight is at 6pm.",
        "The airline reminded me the flight is at 8pm now.",
        UPDATE,
        "_REMINDED_RE allows one word (after my/our) before 'reminded': 'The airline' is not stripped",
    ),
    # --- 11. endings ---
    ("I have an account with Barclays.", "I closed my Barclays account.", UPDATE),
    ("I work at Siemens.", "I handed in my notice at Siemens.", UPDATE),
    ("I work at Siemens.", "I resigned from Siemens.", UPDATE),
    ("I'm the treasurer of the chess club.", "I resigned as treasurer of the chess club.", UPDATE),
    # --- 12. the clause that holds the value ---
    ("My desk is 4.12.", "We moved floors, so my desk is now 6.03.", UPDATE),
    ("My locker is number 12.", "After the renovation, my locker is now number 31.", UPDATE),
    ("My gate code is 4417.", "The landlord changed the locks and the gate code is now 5520.", UPDATE),
    ("My commute is 40 minutes.", "We moved, so my commute is now 25 minutes.", UPDATE),
    ("My team has 8 people.", "After the reorg my team is now 12 people.", UPDATE),
    ("My office is on floor 3.", "My office moved; it's on floor 5 now.", UPDATE),
    # --- 13. "I've got", "every"/"each", "reach" ---
    ("I have two cats.", "I've got three cats now.", UPDATE),
    ("I take the 8:15 train.", "I take the 8:15 train each morning.", SAME),
    ("I run 5 km every day.", "I run 5 km each day.", SAME),
    ("I water the plants every Monday.", "I water the plants every Friday now.", UPDATE),
    ("I call my mum every Sunday.", "I call my mum every Saturday now.", UPDATE),
    ("My number is 555-0101.", "Reach me on 555-0199 from now on.", UPDATE),
    ("My number is 555-0101.", "I'm best reached at 555-0199 these days.", UPDATE),
]


OWN_WORDS = [
    ("User wants to move to Lisbon.", "I want to move to Lisbon."),
    ("User asked whether they should move to Munich.", "I asked whether I should move to Munich."),
    ("User ID is 4417.", "User ID is 4417."),
    ("User testing moved to Friday.", "User testing moved to Friday."),
    ("Another user lives in Berlin.", "Another user lives in Berlin."),
    ("Users must reset their password every 90 days.", "Users must reset their password every 90 days."),
    _misread(
        "User reported a bug in the login page.",
        "I reported a bug in the login page.",
        "'reported' is a report of speech to _REPORT_RE even with an object: 'A bug in the login page.'",
    ),
    _misread(
        "User shared a photo of their dog.",
        "I shared a photo of my dog.",
        "'shared' with an object is dropped as a report: 'A photo of their dog.'",
    ),
    _misread(
        "User confirmed the booking for 7pm.",
        "I confirmed the booking for 7pm.",
        "'confirmed' with an object is dropped as a report: 'The booking for 7pm.'",
    ),
    (
        "User accounts are locked after 3 failed attempts.",
        "User accounts are locked after 3 failed attempts.",
    ),
    ("User stories are due on Monday.", "User stories are due on Monday."),
    ("The user table has 3 million rows.", "The user table has 3 million rows."),
    ("The user base doubled in 2025.", "The user base doubled in 2025."),
]


@pytest.mark.parametrize(("old", "new", "expected"), MUST_NOT_REPLACE)
def test_must_not_replace(old, new, expected):
    assert _verdict(old, new) is expected


@pytest.mark.parametrize(("old", "new", "expected"), SHOULD)
def test_should_replace_or_repeat(old, new, expected):
    assert _verdict(old, new) is expected


@pytest.mark.parametrize(("note", "own"), OWN_WORDS)
def test_in_own_words(note, own):
    assert in_own_words(note) == own
