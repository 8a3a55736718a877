"""Small talk by whole-message patterns: the fallback when the embedding model is unavailable.

The classifier in ``smalltalk_model`` generalises to phrasings nobody listed; these patterns
only match the listed ones (bench/smalltalk/bench_smalltalk.py measures both), but they need
nothing loaded and never take a question for small talk on the labelled set.
"""

from __future__ import annotations

import re
from typing import Literal

Kind = Literal["greeting", "thanks", "goodbye", "conversation"]

# Messages longer than this are questions, whatever words they start with.
MAX_WORDS = 8

_GREETING = re.compile(
    r"^(hi|hello|hey|hiya|howdy|greetings|yo|good (morning|afternoon|evening|day)"
    r"|how are you( doing| today)?|what'?s up|bonjour|hallo|hola|ciao)"
    r"( there| again| quarry| everyone| all)?$"
)
_THANKS = re.compile(
    r"^((ok(ay)?|great|perfect|cool|nice|awesome|good|got it)[ ,]*)?"
    r"(thanks?( you| a lot| so much| very much)?|thx|ty|cheers|much appreciated|danke|merci)"
    r"( (again|a lot|so much|very much))?$"
)
_CONVERSATION = re.compile(
    r"^(what (did|have) (i|we) (just )?(ask(ed)?|say|said|talk(ed)? about|discuss(ed)?)"
    r"|what (was|were) my (first |last |previous |earlier )?questions?"
    r"|(summari[sz]e|recap) (our|this|the) (conversation|chat|discussion)"
    r"|what have we (talked about|discussed) so far)\b"
)


def _normalise(message: str) -> str:
    text = message.lower().strip()
    text = re.sub(r"[\s]+", " ", text)
    return re.sub(r"[!?.,;:~)(*\s]+$", "", text).strip()


def classify(message: str) -> Kind | None:
    """The kind of small talk ``message`` is, or None when it should be searched."""
    text = _normalise(message)
    if not text:
        return None
    if _CONVERSATION.match(text):
        return "conversation"
    if len(text.split()) > MAX_WORDS:
        return None
    if _GREETING.match(text):
        return "greeting"
    if _THANKS.match(text):
        return "thanks"
    return None
