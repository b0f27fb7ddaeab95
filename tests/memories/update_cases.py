"""Everyday update cases for the update engine: what a person says, then what they say later.

Each case is earlier statements (saved in order, each its own save) and one later statement, with what
must become of the FIRST earlier statement once the later one is saved (and how many of the others
it supersedes, usually none):

- "update": superseded by the later one (a change, a correction, a denial), kept as history;
- "same": the later one is the same fact again, so no new memory: the first gains evidence;
- "add": both stay current (another fact, another person, another event, a hypothetical).

The classes follow issue 12: changes the slot patterns miss, negations, name and date corrections,
job changes in any phrasing, reworded repeats, and the cases that must NOT supersede (many-valued
facts, episodes, two people, hypotheticals, other people's preferences, quotes).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    name: str
    earlier: tuple[str, ...]
    later: str
    expect: str  # update | same | add
    # How many of the other earlier statements the later one must supersede (usually none).
    others_superseded: int = 0
    # Which set the case came in (each scored blind on the code of its day) and what it tests.
    batch: str = "12"
    cls: str = ""


def _c(name: str, earlier: str | tuple[str, ...], later: str, expect: str, others: int = 0) -> Case:
    return Case(name, (earlier,) if isinstance(earlier, str) else earlier, later, expect, others)


CASES: tuple[Case, ...] = (
    # --- changes of preference -------------------------------------------------------------------
    _c("tea to coffee", "I prefer tea.", "Actually I now prefer coffee.", "update"),
    _c(
        "window to aisle",
        "I prefer window seats on flights.",
        "These days I prefer aisle seats on flights.",
        "update",
    ),
    _c(
        "favourite band", "My favourite band is Radiohead.", "My favourite band is now Arcade Fire.", "update"
    ),
    _c("favourite food reworded", "My favorite food is sushi.", "Pizza is my favorite food now.", "update"),
    _c(
        "morning to evening workouts",
        "I like to work out in the morning.",
        "I switched to working out in the evening.",
        "update",
    ),
    _c("editor switch", "I use Vim for coding.", "I switched from Vim to VS Code for coding.", "update"),
    _c(
        "phone switch",
        "My phone is an iPhone.",
        "I replaced my iPhone with a Pixel, so my phone is a Pixel now.",
        "update",
    ),
    _c("drink milk", "I take my coffee with milk.", "I take my coffee black now, no milk anymore.", "update"),
    _c("preferred name", "Please call me Robert.", "Actually, please call me Bob.", "update"),
    _c(
        "contact channel",
        "The best way to reach me is email.",
        "The best way to reach me is now Signal, not email.",
        "update",
    ),
    # --- negations --------------------------------------------------------------------------------
    _c("mushrooms", "I like mushrooms.", "I don't like mushrooms anymore.", "update"),
    _c("smoking", "I smoke.", "I quit smoking.", "update"),
    _c("coffee drinker", "I drink coffee every morning.", "I don't drink coffee anymore.", "update"),
    _c("cilantro hate", "I love cilantro.", "I hate cilantro now.", "update"),
    _c("meat", "I eat meat.", "I no longer eat meat.", "update"),
    _c(
        "gym member",
        "I have a gym membership.",
        "I cancelled my gym membership, I don't have one anymore.",
        "update",
    ),
    _c("running", "I go running every weekend.", "I stopped running on weekends.", "update"),
    # --- name corrections -------------------------------------------------------------------------
    _c("sister Anne", "My sister is called Anna.", "My sister is called Anne, not Anna.", "update"),
    _c("dog name", "My dog's name is Max.", "Sorry, my dog's name is Rex, not Max.", "update"),
    _c("manager name", "My manager is Tom.", "My manager is actually Tim, not Tom.", "update"),
    _c("city spelling", "My hometown is Koln.", "My hometown is Cologne, not Koln.", "update"),
    # --- restated dates and numbers ---------------------------------------------------------------
    _c("birthday", "My birthday is on March 5.", "My birthday is on March 15.", "update"),
    _c("anniversary", "Our anniversary is June 2.", "Our anniversary is actually June 12.", "update"),
    _c("age", "I'm 34 years old.", "I'm 35 years old.", "update"),
    _c("shoe size", "My shoe size is 42.", "My shoe size is 43.", "update"),
    _c("phone number", "My phone number is 555-0101.", "My phone number changed to 555-0199.", "update"),
    _c(
        "flight time",
        "My flight to Lisbon leaves at 9am on Friday.",
        "Correction: my flight to Lisbon leaves at 11am on Friday.",
        "update",
    ),
    # --- job changes in any phrasing --------------------------------------------------------------
    _c("left and joined", "I work at Google.", "I left Google and joined Meta.", "update"),
    _c("started at", "I work at Google.", "I started at Stripe last week.", "update"),
    _c("new job", "I work at Acme as an engineer.", "I got a new job at Globex.", "update"),
    _c("employer phrasing", "My employer is Initech.", "My employer is now Hooli.", "update"),
    _c("job title", "My job title is senior engineer.", "My job title is staff engineer now.", "update"),
    _c("role change", "I'm a teacher.", "I'm no longer a teacher, I'm a nurse now.", "update"),
    # --- moves ------------------------------------------------------------------------------------
    _c("paris berlin", "I live in Paris.", "I moved to Berlin.", "update"),
    _c("based in", "I'm based in London.", "I live in Manchester now.", "update"),
    _c("address", "My address is 12 Oak Street.", "My new address is 7 Elm Road.", "update"),
    # --- relationships ----------------------------------------------------------------------------
    _c("partner", "My partner is Sam.", "My partner is now Alex.", "update"),
    _c("married", "I'm single.", "I got married last year.", "update"),
    _c("car", "I drive a Honda Civic.", "I sold the Honda and now I drive a Tesla.", "update"),
    # --- reworded repeats (same) ------------------------------------------------------------------
    _c("peanut allergy", "I'm allergic to peanuts.", "I have a peanut allergy.", "same"),
    _c("vegetarian", "I am a vegetarian.", "I'm vegetarian.", "same"),
    _c("lives berlin reworded", "I live in Berlin.", "I'm living in Berlin.", "same"),
    _c("likes jazz reworded", "I really like jazz.", "I love jazz.", "same"),
    _c("works google reworded", "I work at Google.", "I'm working at Google.", "same"),
    _c("dog named", "I have a dog named Rex.", "I have a dog called Rex.", "same"),
    _c("birthday reworded", "My birthday is March 5.", "My birthday is on the 5th of March.", "same"),
    _c("hates flying reworded", "I hate flying.", "I really dislike flying.", "same"),
    _c("less said", "I work at Google as a software engineer.", "I work at Google.", "same"),
    _c("exact repeat", "I'm allergic to cats.", "I'm allergic to cats.", "same"),
    _c("case and punctuation", "i live in lyon", "I live in Lyon.", "same"),
    _c("sister reworded", "My sister lives in Toronto.", "My sister is living in Toronto.", "same"),
    # --- many-valued facts (add) ------------------------------------------------------------------
    _c("second pet", "I have a dog.", "I also have a cat.", "add"),
    _c("another hobby", "I like hiking.", "I like swimming.", "add"),
    _c("another language", "I speak French.", "I speak Spanish too.", "add"),
    _c("another sport", "I play tennis.", "I play chess on Sundays.", "add"),
    _c("another friend", "My friend Maya lives in Rome.", "My friend Leo lives in Oslo.", "add"),
    _c("another food", "I love sushi.", "I love tacos.", "add"),
    _c("another allergy", "I'm allergic to peanuts.", "I'm allergic to shellfish.", "add"),
    _c("another instrument", "I play the guitar.", "I play the piano as well.", "add"),
    _c("kids", "I have a son named Luca.", "I have a daughter named Mia.", "add"),
    _c("unrelated facts", "I prefer tea.", "I prefer aisle seats on long flights.", "add"),
    _c("unrelated work", "I work at Google.", "I like working from home on Fridays.", "add"),
    # --- episodes (add) ---------------------------------------------------------------------------
    _c("two trips", "I went to Paris last year.", "I went to Rome last month.", "add"),
    _c("two dinners", "Yesterday I had dinner with Marco.", "Today I had lunch with Marco.", "add"),
    _c(
        "concert then another",
        "I saw Radiohead in concert in May.",
        "I saw Coldplay in concert in June.",
        "add",
    ),
    _c("visited then lives", "I visited Berlin in 2019.", "I live in Munich.", "add"),
    _c("meeting episodes", "I met Sarah for coffee on Monday.", "I met Sarah for coffee on Thursday.", "add"),
    # --- two people (add) -------------------------------------------------------------------------
    _c("cousin vs colleague", "My cousin Alex lives in Rome.", "My colleague Alex lives in Oslo.", "add"),
    _c("sister vs me", "My sister prefers tea.", "I prefer coffee.", "add"),
    _c("wife vs me job", "My wife works at Google.", "I work at Meta.", "add"),
    _c("named vs me", "Anna lives in Paris.", "I live in Berlin.", "add"),
    _c("brother vs sister", "My brother is called Tom.", "My sister is called Emma.", "add"),
    _c("two friends move", "My friend Maya moved to Lisbon.", "My friend Leo moved to Porto.", "add"),
    # --- other people's preferences (add) ---------------------------------------------------------
    _c("husband likes", "I like mushrooms.", "My husband doesn't like mushrooms.", "add"),
    _c("boss prefers", "I prefer morning meetings.", "My boss prefers afternoon meetings.", "add"),
    _c("kids hate", "I love broccoli.", "My kids hate broccoli.", "add"),
    # --- hypotheticals (add) ----------------------------------------------------------------------
    _c("if moved", "I live in Paris.", "If I moved to Berlin, I would cycle everywhere.", "add"),
    _c("might switch", "I work at Google.", "I might join Meta next year.", "add"),
    _c("thinking about", "I prefer tea.", "I'm thinking about switching to coffee.", "add"),
    _c("wish", "I live in Ohio.", "I wish I lived in California.", "add"),
    _c("question", "I like sushi.", "Do I still like sushi?", "add"),
    _c("maybe", "My favourite color is blue.", "Maybe my favourite color is green?", "add"),
    # --- quotes and reports (add) -----------------------------------------------------------------
    _c("boss said", "I live in Paris.", 'My boss said "I live in London".', "add"),
    _c("told me", "I work at Google.", "Maya told me she works at Apple.", "add"),
    _c("reported", "I prefer tea.", "My doctor said that I should prefer green tea.", "add"),
    # --- several earlier statements ---------------------------------------------------------------
    _c("chain of moves", ("I live in Paris.", "I play the violin."), "I moved to Madrid.", "update"),
    _c("keep other facts", ("I have a cat.", "I live in Paris."), "I moved to Madrid.", "add", others=1),
    _c("unrelated earlier", ("I prefer tea.", "I like jazz."), "I prefer coffee now.", "update"),
    _c("pets stay", ("I have a dog named Rex.", "I live in Oslo."), "I adopted a cat named Luna.", "add"),
    # --- a second set, written after the rules above and measured before any change for it -------
    _c("coffee order", "I usually order a latte.", "These days I order a flat white instead.", "update"),
    _c("bedtime", "I go to bed around 11pm.", "I go to bed around 10pm now.", "update"),
    _c("no longer vegan", "I'm vegan.", "I'm not vegan anymore.", "update"),
    _c("team", "I support Arsenal.", "I support Chelsea now, not Arsenal.", "update"),
    _c("dentist", "My dentist is Dr. Patel.", "My dentist is now Dr. Kim.", "update"),
    _c("wifi", "The wifi password is sunflower22.", "The wifi password changed to moonlight99.", "update"),
    _c("son age", "My son is 7.", "My son is 8 now.", "update"),
    _c("laptop", "I use a ThinkPad for work.", "I switched to a MacBook for work.", "update"),
    _c(
        "gym time",
        "I go to the gym on Mondays.",
        "I go to the gym on Tuesdays now instead of Mondays.",
        "update",
    ),
    _c(
        "allergy corrected",
        "I'm allergic to penicillin.",
        "Correction: I'm not allergic to penicillin, it was amoxicillin.",
        "update",
    ),
    _c("moved city", "I live in Austin.", "We relocated to Denver in the spring.", "update"),
    _c("quit job", "I work at Deloitte.", "I quit Deloitte last month.", "update"),
    _c("name", "My name is Jon.", "My name is actually John, with an h.", "update"),
    _c("same tea", "I drink green tea every morning.", "Every morning I drink green tea.", "same"),
    _c("same sister", "My sister Emma is a doctor.", "My sister Emma works as a doctor.", "same"),
    _c("same lactose", "I'm lactose intolerant.", "I am lactose-intolerant.", "same"),
    _c("same city", "I'm from Lyon originally.", "Originally I'm from Lyon.", "same"),
    _c("same hate", "I can't stand cilantro.", "I hate cilantro.", "same"),
    _c("add kids", "I have two kids.", "I have a dog too.", "add"),
    _c("add books", "I'm reading Dune.", "I'm also reading Piranesi.", "add"),
    _c("add trip", "I went to Japan in 2019.", "I went to Japan again in 2023.", "add"),
    _c("add mom", "I live in Boston.", "My mom lives in Miami.", "add"),
    _c(
        "add hypothetical",
        "I work at Amazon.",
        "If I ever leave Amazon, I'd like to work at a startup.",
        "add",
    ),
    _c("add friend pref", "I prefer dogs.", "My friend Sara prefers cats.", "add"),
    _c("add plan", "I live in Seattle.", "I'm considering moving to Portland.", "add"),
    _c("add quote", "I love my job.", 'My colleague said "I hate my job".', "add"),
    _c("add languages", "I'm learning Italian.", "I'm learning the guitar.", "add"),
    _c(
        "add two meetings",
        "I have a dentist appointment on Monday.",
        "I have a haircut appointment on Monday.",
        "add",
    ),
    _c("add enjoy", "I enjoy cooking Thai food.", "I enjoy baking bread.", "add"),
    _c("add colleague job", "My colleague Ben works at IBM.", "My cousin Ben works at Oracle.", "add"),
    # --- a third set, written after the second round of changes and measured before any change for it ---
    _c("commute", "I commute by bus.", "I commute by bike now.", "update"),
    _c(
        "coffee shop", "My usual coffee shop is Blue Bottle.", "My usual coffee shop is now Ritual.", "update"
    ),
    _c("gluten", "I eat gluten.", "I stopped eating gluten.", "update"),
    _c("spouse name", "My wife's name is Laura.", "My wife's name is Lara, not Laura.", "update"),
    _c("kids count", "I have two kids.", "I have three kids now.", "update"),
    _c("bank", "I bank with Chase.", "I switched banks to Ally.", "update"),
    _c("email", "My email is ann@old.com.", "My email is now ann@new.com.", "update"),
    _c("meeting day", "Our team meeting is on Tuesdays.", "Our team meeting moved to Wednesdays.", "update"),
    _c("pet died", "I have a cat named Milo.", "I don't have a cat anymore.", "update"),
    _c("trainer", "My personal trainer is Carlos.", "My personal trainer is Dana now.", "update"),
    _c("wake time", "I wake up at 6am.", "I wake up at 7am these days.", "update"),
    _c("no sugar", "I take sugar in my tea.", "I don't take sugar in my tea anymore.", "update"),
    _c("same morning run", "I run every morning.", "Every morning I go for a run.", "same"),
    _c("same nurse", "My mother is a nurse.", "My mom works as a nurse.", "same"),
    _c("same allergy", "I'm allergic to bee stings.", "Bee stings make me allergic.", "same"),
    _c("same prefer", "I prefer working remotely.", "I prefer remote work.", "same"),
    _c("same birthday", "My birthday is July 4.", "My birthday is on July 4th.", "same"),
    _c("same shellfish", "I can't eat shellfish.", "I cannot eat shellfish.", "same"),
    _c("add pet", "I have a cat named Milo.", "I have a dog named Bruno too.", "add"),
    _c("add visit", "I visited Lisbon in May.", "I visited Porto in June.", "add"),
    _c("add dad", "I prefer tea.", "My dad prefers coffee.", "add"),
    _c("add hobby", "I knit on weekends.", "I paint on weekends.", "add"),
    _c("add maybe", "I work at Nike.", "Maybe I'll work at Adidas one day.", "add"),
    _c("add quote", "I'm a morning person.", "My roommate says she is a morning person.", "add"),
    _c(
        "add two colleagues", "My colleague Priya lives in Leeds.", "My neighbour Priya lives in York.", "add"
    ),
    _c("add food", "I like Thai food.", "I like Ethiopian food.", "add"),
    _c("add event", "I ran a 10k in April.", "I ran a half marathon in October.", "add"),
    _c("add question", "I live in Leeds.", "Should I move to York?", "add"),
    _c("add sibling", "My brother lives in Cork.", "My sister lives in Galway.", "add"),
    _c("add skill", "I can play the drums.", "I can also play the bass.", "add"),
)
