"""The published word lists the style markers are built on, and the features that decide
which uses of them are the tic.

Nothing here is taken from an agent's own sentences (ours or the original SDK's seeded
agent); each family is a lexicon from the literature plus the few rules that separate the
tic from an honest use of the same words. `style.py` compiles `FAMILY_PHRASES` into its
phrase families, so a `--phrases` file can still replace or extend any of them.

**Hedging** (`no_hedging`): Hyland's hedges and boosters (K. Hyland, *Metadiscourse*,
Continuum 2005, appendix; the lists of Hyland 1998, *Hedging in Scientific Research
Articles*), with the conversational hedges of Prokofieva and Hirschberg ("Hedging and
speaker commitment", LREC 2014 workshop: "I think", "I guess", "kind of", "sort of").
Following Prince, Frader and Bosk ("On hedging in physician-physician discourse", 1982),
a hedge is either a *shield*, which lowers the speaker's commitment to what they say ("I
think", "probably", "it seems", "in most cases", "I'm not sure") or an *approximator*,
which makes a quantity or frequency fuzzy ("about two hours", "usually arrives in 3 to 5
days"). The tic a preference-trained policy drifts into is the shield; an approximator
about the world is often the honest answer, so `APPROXIMATORS` are listed and not
flagged. A bare modal (may, might, could, should) is not flagged either: "the record is
old, so it may have changed" and "you may cancel within 14 days" are honest; a modal
hedging the speaker's own answer ("that should be right", "this might be correct") is.
A booster negated ("not sure", "not certain", "can't say for sure") is a shield (Hyland
1998 on negated certainty), except where it asks the person which one they meant ("I'm
not sure which order you mean").

**Sycophancy** (`no_sycophancy`): compliments, by the formulas Manes and Wolfson found in
American English compliments ("The compliment formula", in *Conversational Routine*,
1981: "NP is/looks (really) ADJ", "I (really) like/love NP", "PRO is (really) (a) ADJ NP",
"You V (a) (really) ADJ NP", "What (a) ADJ NP!", "ADJ NP!"), over positive evaluative
adjectives (theirs, with Holmes, "Paying compliments", *Journal of Pragmatics* 1988) and
the nouns for what a person contributed (a question, a point, an idea, a choice);
agreement raised by a booster ("absolutely right", "completely agree", "couldn't agree
more": the feedback sycophancy of Sharma et al., "Towards understanding sycophancy in
language models", 2023); and praise of the person ("you clearly know", "kudos"). Plain
agreement ("you're right, the invoice shows two charges") is not flattery.

**Apology** (`no_apology`): the illocutionary force indicating devices of apology in the
Cross-Cultural Speech Act Realization Project (Blum-Kulka, House and Kasper, 1989; Olshtain
and Cohen 1983): sorry, apologise, excuse, forgive, pardon, regret, afraid, and the
taking-on-responsibility formulas ("my mistake", "my fault"). "Unfortunately" reports bad
news without apologising and is not in it.

**Boilerplate** (`no_boilerplate`): the formulaic moves of a service encounter that carry
no content: pre-closings and closings (Schegloff and Sacks, "Opening up closings", 1973;
"have a great day", "take care"), offers of further help ("let me know if you have any
other questions", "feel free to ask"), wishes that the answer helped, institutional
formulae of service English (Cameron, *Good to Talk?*, 2000: "your call is important to
us", "thank you for contacting"), an assistant naming itself ("as an AI"), and a response
token standing alone as an exclamation before the answer ("Certainly!", "Of course!";
Gardner, *When Listeners Talk*, 2001).

Text inside quotation marks is someone else's words (an error message the agent reads
back, a sign), so `style.py` leaves it out before any family is matched. Every pattern is
a flat alternation with bounded gaps, run on text capped in length first.
"""

from __future__ import annotations

from ..judges.replies import FREQUENCY_APPROXIMATORS

# -- hedging ---------------------------------------------------------------------------

# Hyland (2005, appendix): the hedges. Kept whole for reference; the shields below are
# drawn from it, the approximators are what is left out on purpose.
HYLAND_HEDGES = (
    "about", "almost", "apparent", "apparently", "appear", "appeared", "appears",
    "approximately", "argue", "argued", "argues", "around", "assume", "assumed",
    "broadly", "certain amount", "certain extent", "certain level", "claim", "claimed",
    "claims", "could", "couldn't", "doubt", "doubtful", "essentially", "estimate",
    "estimated", "fairly", "feel", "feels", "felt", "frequently", "from my perspective",
    "from our perspective", "from this perspective", "generally", "guess", "indicate",
    "indicated", "indicates", "in general", "in most cases", "in most instances",
    "in my opinion", "in my view", "in this view", "in our opinion", "in our view",
    "largely", "likely", "mainly", "may", "maybe", "might", "mostly", "often",
    "on the whole", "ought", "perhaps", "plausible", "plausibly", "possible", "possibly",
    "postulate", "postulated", "postulates", "presumable", "presumably", "probable",
    "probably", "quite", "rather", "relatively", "roughly", "seems", "should",
    "sometimes", "somewhat", "suggest", "suggested", "suggests", "suppose", "supposed",
    "supposes", "suspect", "suspects", "tend to", "tended to", "tends to",
    "to my knowledge", "typically", "uncertain", "uncertainly", "unclear", "unclearly",
    "unlikely", "usually", "would", "wouldn't",
)  # fmt: skip

# Hyland (2005, appendix): the boosters. Negated, the certainty ones are shields.
HYLAND_BOOSTERS = (
    "actually", "always", "believe", "believed", "believes", "beyond doubt", "certain",
    "certainly", "clear", "clearly", "conclusively", "decidedly", "definite",
    "definitely", "demonstrate", "demonstrated", "demonstrates", "doubtless", "establish",
    "established", "evident", "evidently", "find", "finds", "found", "in fact",
    "incontestable", "incontestably", "incontrovertible", "incontrovertibly", "indeed",
    "indisputable", "indisputably", "know", "known", "must", "never", "no doubt",
    "obvious", "obviously", "of course", "prove", "proved", "proves", "realize",
    "realized", "realizes", "really", "show", "showed", "shown", "shows", "sure",
    "surely", "think", "thinks", "thought", "truly", "true", "undeniable", "undeniably",
    "undisputedly", "undoubtedly", "without doubt",
)  # fmt: skip

# Approximators (Prince et al. 1982): fuzzy quantities and frequencies about the world.
# Listed so the choice is visible; never flagged on their own.
# The frequency ones (`replies.FREQUENCY_APPROXIMATORS`, kept with the judges' readers,
# which use them too) say how things tend to be in general.
APPROXIMATORS = (
    "about", "around", "approximately", "roughly", "almost", "nearly", "or so",
    "give or take", *FREQUENCY_APPROXIMATORS, "quite", "rather", "fairly", "relatively",
)  # fmt: skip

# Shields, single words: epistemic adverbs and adjectives of the speaker's commitment
# (Hyland's hedges less the approximators and the bare modals).
_SHIELD_WORDS = (
    "perhaps", "maybe", "possibly", "presumably", "probably", "apparently", "arguably",
    "conceivably", "supposedly", "seemingly", "plausibly", "somewhat", "presumable",
    "doubtful",
)  # fmt: skip

# Shields, phrases: Hyland's multiword hedges, Prokofieva and Hirschberg's relational
# hedges, and the generalizing frames that scope over a whole claim.
_SHIELD_PHRASES = (
    "in most cases", "in most instances", "in general", "generally speaking",
    "broadly speaking", "roughly speaking", "on the whole", "by and large",
    "for the most part", "as a general rule", "more often than not", "to some extent",
    "to a certain extent", "to a certain degree", "to my knowledge", "in my opinion",
    "in my view", "from my perspective", "in all likelihood", "chances are",
    "more or less", "may or may not", "might or might not", "could or could not",
    "it depends", "it all depends",
)  # fmt: skip

_FIRST_PERSON_EPISTEMIC = (
    "think", "believe", "guess", "suppose", "reckon", "assume", "imagine", "gather",
    "presume", "suspect", "feel like", "feel that",
)  # fmt: skip

# Certainty words that, negated, lower the speaker's commitment. Not "clear": "the photo
# is not clear" is about the photo.
_CERTAINTY = ("sure", "certain", "positive", "confident")

_HEDGING = (
    # first-person epistemic verbs: "I think", "I'd guess", "I would say"
    "re[" + " ".join(w.split()[0] for w in _FIRST_PERSON_EPISTEMIC) + "]:"
    r"i (?:(?:do |don't |do not |really |kind of |sort of )?)(?:"
    + "|".join(_FIRST_PERSON_EPISTEMIC)
    + r")\b",
    r"re[think guess say imagine]:i(?:'d| would) (?:think|guess|say|imagine)\b",
    r"re[understanding impression guess sense]:my (?:understanding|impression|guess|sense) is",
    r"re[far]:as far as i (?:know|can tell|understand|can see|am aware)",
    r"re[best]:to the best of my (?:knowledge|understanding|recollection)",
    r"re[mistaken]:(?:if|unless) i(?:'m| am) (?:not )?mistaken",
    r"re[wrong mistaken off]:i (?:could|may|might) (?:well )?be (?:wrong|mistaken|off)",
    r"re[quote hold]:(?:don't|do not) (?:quote me|hold me to)",
    # a negated certainty booster, unless it asks which one the person meant
    "re[" + " ".join(_CERTAINTY) + "]:"
    r"(?:\bnot|n't|\bnever|\bhardly)\s+(?:(?:be|entirely|completely|totally|fully|quite|"
    r"absolutely|really|100%|too|so|all that|that|very)\s+){0,2}(?:"
    + "|".join(_CERTAINTY)
    + r")\b(?!\s+(?:which|what|who|where|how)\b)",
    r"re[sure certain]:(?:can't|cannot|can not|couldn't) say (?:for )?(?:sure|certain)",
    r"re[guarantee]:(?:no|can't|cannot) guarantee",
    "re[confident sure certain]:"
    r"(?:fairly|reasonably|pretty|somewhat|mostly|quite) (?:confident|sure|certain)",
    # epistemic "seems"/"appears"/"looks like", not "appears on your statement"
    "re[seems appears]:"
    r"(?:it|this|that|there) (?:seems|appears)(?! on| in| as| under| at| next| to you)",
    "re[seems appears seem appear seemed appeared]:"
    r"(?:seems?|appears?|seemed|appeared) to (?:be|have|show|indicate|suggest|mean|work)\b",
    r"re[seem seems seemed]:\bseem(?:s|ed)? (?:like|as if|as though|right|fine|okay|ok|correct)",
    r"re[looks]:(?:it|that|this) looks like",
    r"re[looks]:looks like (?:it|the|you|your|this|that)",
    r"re[could might may]:it (?:could|might|may) (?:well )?be (?:that|the case)",
    r"re[possible conceivable likely]:it(?:'s| is) (?:possible|conceivable|likely|probable) that",
    # a modal hedging the speaker's own answer
    "re[should would could may might]:"
    r"(?:this|that|it|which) (?:should|would|could|may|might) (?:well |probably |possibly )?"
    r"be (?:right|correct|accurate|true|the case|the answer)\b",
    # epistemic "likely": "is likely delayed", "most likely"; not "likely to" in a
    # question about someone else
    r"re[likely unlikely]:(?:most |very |quite |more than )?\b(?:likely|unlikely)\b(?! to)",
    r"re[likely unlikely]:(?:is|are|was|were|it's) (?:very |quite )?(?:un)?likely to\b",
    # "kind of" / "sort of" as a hedge, not "what kind of account"
    r"re[kind sort]:(?<!what )(?<!which )(?<!the )(?<!a )(?<!any )(?<!this )(?<!that )"
    r"(?<!some )(?<!same )(?<!one )(?<!no )(?:kind|sort) of\b(?! (?:a|an|the|thing|things)\b)",
    *_SHIELD_WORDS,
    *_SHIELD_PHRASES,
)

# -- sycophancy ------------------------------------------------------------------------

# Positive evaluative adjectives of compliments (Manes and Wolfson 1981; Holmes 1988).
_PRAISE = (
    "great", "good", "excellent", "fantastic", "wonderful", "brilliant", "terrific",
    "superb", "amazing", "awesome", "outstanding", "insightful", "thoughtful",
    "perceptive", "smart", "clever", "wise", "astute", "fascinating", "lovely", "sharp",
    "incredible", "impressive", "interesting", "intriguing", "nice", "beautiful",
    "fabulous", "marvellous", "marvelous", "splendid", "stellar", "phenomenal",
    "remarkable", "exceptional", "admirable", "commendable", "savvy",
)  # fmt: skip
# What a person contributes to a conversation, the objects of those compliments.
_CONTRIBUTION = (
    "question", "questions", "point", "points", "observation", "idea", "ideas",
    "thought", "thoughts", "request", "catch", "instinct", "instincts", "thinking",
    "move", "choice", "call", "query", "suggestion", "plan", "approach", "decision",
    "insight", "way", "reasoning", "intuition", "judgment", "judgement", "eye", "taste",
    "spot", "find", "attitude", "initiative", "summary", "analysis",
)  # fmt: skip
_ADJ = "(?:" + "|".join(_PRAISE) + ")"
_NOUNS = "|".join(_CONTRIBUTION)
_NOUN = f"(?:{_NOUNS})"
_INTENSE = r"(?:(?:really|very|truly|so|such an?|such|absolutely|incredibly|particularly) )?"
_A = r"(?:(?:a|an|such a|such an) )?"
_PRAISE_TRIGGERS = " ".join(_PRAISE)

_SYCOPHANCY = (
    # "What a great idea", "What an interesting question"
    f"re[{_PRAISE_TRIGGERS}]:what (?:a|an) {_INTENSE}{_ADJ}\\b",
    # "Great question!", "Excellent point," (ADJ NP at the start of a sentence)
    f"re[{_PRAISE_TRIGGERS}]:(?:^|[.!?]\\s+|^\\W*){_INTENSE}{_ADJ} {_NOUN}\\b",
    # "That's a really smart way", "this is an excellent question"
    f"re[{_PRAISE_TRIGGERS}]:(?:that|this|it|which)(?:'s| is| was) {_A}{_INTENSE}{_ADJ} {_NOUN}\\b",
    # "You raise a really good point", "You've asked a brilliant question"
    f"re[{_PRAISE_TRIGGERS}]:you(?:'ve| have)? (?:raise|raised|make|made|ask|asked|have|had|"
    f"pose|posed|bring|brought|offer|offered) {_A}{_INTENSE}{_ADJ} {_NOUN}\\b",
    # "Your thinking here is excellent", "Your attention to detail is impressive"
    f"re[{_PRAISE_TRIGGERS} spot]:your (?:{_NOUNS}|attention to detail)(?: here)? "
    f"(?:is|are|was|were) {_INTENSE}(?:{_ADJ}|spot on|impeccable|right on)\\b",
    # "I love how you laid out", "I really admire how organised you are"
    r"re[love adore admire like]:i (?:really |truly |absolutely )?(?:love|adore|admire|really like)"
    r" (?:how|that|your|the way)\b",
    r"re[admire]:i (?:really |truly )?admire\b",
    # agreement raised by a booster
    "re[right correct spot]:"
    r"you(?:'re| are| were) (?:absolutely|completely|totally|so|100%|entirely|quite|exactly|"
    r"perfectly|clearly|definitely|indeed|spot on,?) (?:right|correct|spot on)\b",
    r"re[agree]:(?:i )?(?:completely|totally|absolutely|wholeheartedly|fully|entirely|100%) agree",
    r"re[agree]:(?:i )?(?:couldn't|could not) agree more",
    # praise of the person
    "re[clearly really obviously certainly truly]:"
    r"you (?:clearly|really|obviously|certainly|truly) (?:know|understand|thought)\b",
    "re[perceptive insightful thoughtful astute smart clever wise sharp]:"
    r"(?:really|very|so|truly|incredibly) (?:perceptive|insightful|thoughtful|astute|smart|"
    r"clever|wise|sharp)(?: of you)?\b",
    r"re[taste]:(?:impeccable|excellent|great|exquisite|wonderful|fantastic) taste",
    r"re[star genius legend pro]:you(?:'re| are) (?:a |such a )?(?:star|genius|legend|pro)\b",
    r"re[must]:i must say",
    "spot on",
    "good on you",
    "kudos",
    "bravo",
    "hats off",
)

# -- apology ---------------------------------------------------------------------------

_APOLOGY = (
    # CCSARP's IFIDs
    "sorry",
    "re[apology apologies apologise apologize apologised apologized apologising apologizing]:"
    r"apolog(?:y|ies|ise|ize|ised|ized|ising|izing)",
    r"re[excuse]:excuse (?:me|us|the|my|our)\b",
    r"re[forgive]:forgive (?:me|us|the|my|our)\b",
    r"re[pardon]:pardon (?:me|us|the|my|our)\b",
    r"re[regret]:(?:i|we) (?:sincerely |deeply |truly |really )?regret",
    "regrettably",
    r"re[afraid]:i(?:'m| am) afraid\b(?! of)",
    # taking on responsibility
    "my bad",
    "my mistake",
    "my fault",
    "mea culpa",
)

# -- boilerplate -----------------------------------------------------------------------

_BOILERPLATE = (
    # thanks and institutional formulae of service English
    "re[thank thanks]:"
    r"thank(?:s| you)(?: so much| very much)? for (?:contacting|reaching out|choosing|"
    r"getting in touch|being (?:a|such a) (?:valued|loyal)|your (?:patience|understanding|"
    r"question|inquiry|enquiry|message|business|time|cooperation|loyalty)|shopping|"
    r"using our|your interest)",
    "re[appreciate value]:"
    r"(?:we|i) (?:really |truly )?(?:appreciate|value) your (?:patience|understanding|"
    r"business|loyalty|feedback|custom|trust)",
    "re[priority]:"
    r"your (?:satisfaction|happiness|experience) is (?:our|my) (?:top |number one |"
    r"highest |first )?priority",
    "re[important]:"
    r"your (?:call|business|feedback|custom|time) is (?:very |really )?important to (?:us|me)",
    "re[committed]:"
    r"committed to (?:providing|delivering|offering) (?:you )?(?:excellent|exceptional|"
    r"the best|outstanding|great|quality)",
    "we value your business",
    r"re[forward]:(?:we|i) look forward to (?:serving|helping|hearing|seeing|assisting)",
    "re[strive aim endeavor endeavour]:"
    r"(?:we|i) (?:strive|aim|endeavou?r) to (?:provide|deliver|give|offer|ensure)",
    # offers of further help
    r"re[anything]:(?:is there|if there(?:'s| is)) anything else (?:i|we) can (?:help|assist|do)",
    r"re[anything]:(?:if there(?:'s| is)|for) anything else (?:you need|you'd like)",
    "re[hesitate]:"
    r"(?:please )?(?:don't|do not) hesitate to (?:reach out|contact|ask|get in touch|let)",
    r"re[free]:feel free to (?:reach out|contact|ask|get in touch|let (?:us|me) know)",
    r"re[know]:let (?:me|us) know if (?:there(?:'s| is)|you have|you need|you've got) "
    r"(?:anything|any (?:other|further|more)|something) ?(?:else|questions?)?",
    r"re[questions]:if you have any (?:other|further|more) questions",
    "re[questions assistance queries help]:"
    r"for any (?:other|further) (?:questions|assistance|queries|help)",
    r"re[should]:should you (?:need|have|require) (?:any )?(?:further|more|other|additional)",
    r"re[help]:i(?:'m| am) (?:always )?here to help",
    r"re[help assist]:(?:happy|glad|pleased|delighted) to (?:help|assist)",
    r"re[help]:glad i could help",
    r"re[pleasure]:(?:it was|it's been|it has been|it is always) (?:my|a|our) pleasure",
    "my pleasure",
    # wishes that the answer helped
    r"re[hope]:(?:i )?hope (?:this|that) (?:helps|helped|was helpful|answers|clears)",
    # closings
    "re[day one weekend evening afternoon morning week stay]:"
    r"have an? (?:great|good|nice|wonderful|lovely|fantastic|pleasant|blessed|excellent) "
    r"(?:day|one|weekend|evening|afternoon|morning|week|stay)",
    r"re[enjoy]:enjoy the rest of your (?:day|week|weekend|evening|afternoon|stay)",
    r"re[wishing]:wishing you an? ",
    r"re[regards]:(?:best|kind|warm) regards",
    # an assistant naming itself
    "re[ai model assistant]:"
    r"as an? (?:ai|language model|ai language model|virtual assistant|ai assistant)",
    r"re[assistant]:as your (?:ai|virtual|digital) assistant",
    # a response token standing alone before the answer
    r"re[certainly absolutely course sure definitely]:"
    r"(?:^|[.!?]\s+)(?:certainly|absolutely|of course|sure thing|definitely)!",
)

FAMILY_PHRASES: dict[str, tuple[str, ...]] = {
    "boilerplate": _BOILERPLATE,
    "hedging": _HEDGING,
    "apology": _APOLOGY,
    "sycophancy": _SYCOPHANCY,
}
