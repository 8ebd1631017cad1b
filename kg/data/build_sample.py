#!/usr/bin/env python3
"""Build the shipped sample knowledge graph, ``sample_wikidata.json``.

The sample is a small, closed world of real Wikidata entities (real Q/P ids)
written in the exact layout of a Wikidata JSON dump: a line ``[``, one entity
JSON object per line (every line but the last ending in ``,``), a line ``]``.

Hand-written: facts from Wikidata and general knowledge, descriptions in our own
words; a fact, date or id that was not certain was left out rather than guessed.

Notes on the modelling:
* Statement ids are ``<subject>$<UUID>`` with the UUID derived (uuid5) from the
  subject, property, value and qualifiers, so the output is byte-for-byte
  reproducible.
* Sitelink *counts* follow the real fame of an entity (used as a popularity
  proxy).  Titles are the entity's label in that language where we have one
  (en/de/fr) and otherwise the English label; they are placeholders, not real
  article titles.
* Dates before the Gregorian reform, or known only by baptism, have year precision.
Usage: python build_sample.py [--out PATH]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import uuid
from pathlib import Path

OUT_DEFAULT = Path(__file__).with_name("sample_wikidata.json")
MODIFIED = "2026-01-01T00:00:00Z"
GREGORIAN = "http://www.wikidata.org/entity/Q1985727"
EARTH = "http://www.wikidata.org/entity/Q2"
STATEMENT_NS = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/factprobe/sample-kg")
SOME, NONE = "<somevalue>", "<novalue>"

# --------------------------------------------------------------------------
# properties: id -> (datatype, label, description, aliases)
# --------------------------------------------------------------------------
PROPERTIES = {
    "P6": ("wikibase-item", "head of government", "leader of the executive branch of a government",
           ["prime minister", "premier", "chancellor"]),
    "P17": ("wikibase-item", "country", "sovereign state the item is located in", ["sovereign state", "state"]),
    "P19": ("wikibase-item", "place of birth", "most specific known place where the person was born",
            ["birthplace", "born in", "POB"]),
    "P20": ("wikibase-item", "place of death", "most specific known place where the person died",
            ["died in", "deathplace", "POD"]),
    "P21": ("wikibase-item", "sex or gender", "sex or gender identity of the person",
            ["gender", "sex"]),
    "P22": ("wikibase-item", "father", "male parent of the person", ["dad", "parent"]),
    "P26": ("wikibase-item", "spouse", "person the subject is or was married to",
            ["husband", "wife", "married to"]),
    "P27": ("wikibase-item", "country of citizenship", "country that recognises the person as its citizen",
            ["citizenship", "nationality", "citizen of"]),
    "P30": ("wikibase-item", "continent", "continent the item is part of", ["located on continent"]),
    "P31": ("wikibase-item", "instance of", "class of which the item is a particular member",
            ["is a", "type", "is an"]),
    "P35": ("wikibase-item", "head of state", "official who is the highest representative of the state",
            ["president", "monarch", "chief of state"]),
    "P36": ("wikibase-item", "capital", "seat of government of a country or other territory",
            ["capital city", "seat of government"]),
    "P37": ("wikibase-item", "official language", "language with legal status in the territory",
            ["language of administration"]),
    "P38": ("wikibase-item", "currency", "currency in use in the territory", ["money", "legal tender"]),
    "P39": ("wikibase-item", "position held", "office or position the person holds or held",
            ["office held", "political office"]),
    "P47": ("wikibase-item", "shares border with", "territory sharing a land border with the item",
            ["borders", "neighbour", "adjacent to"]),
    "P50": ("wikibase-item", "author", "writer of the work", ["writer", "written by"]),
    "P57": ("wikibase-item", "director", "person who directed the film", ["film director", "directed by"]),
    "P103": ("wikibase-item", "native language", "first language the person learned",
             ["mother tongue", "first language"]),
    "P106": ("wikibase-item", "occupation", "occupation or profession of the person",
             ["profession", "job", "work"]),
    "P131": ("wikibase-item", "located in the administrative territorial entity",
             "administrative unit the item is located in", ["located in", "administrative unit"]),
    "P143": ("wikibase-item", "imported from Wikimedia project", "Wikimedia project the statement was taken from",
             ["imported from"]),
    "P166": ("wikibase-item", "award received", "award or honour given to the subject",
             ["award", "prize received", "honours"]),
    "P170": ("wikibase-item", "creator", "maker of the creative work", ["artist", "made by"]),
    "P279": ("wikibase-item", "subclass of", "every instance of this class is also an instance of that class",
             ["is a type of", "subclass"]),
    "P364": ("wikibase-item", "original language of film or TV show", "language in which the film was made",
             ["original language"]),
    "P407": ("wikibase-item", "language of work or name", "language the work is written in",
             ["language", "written in"]),
    "P495": ("wikibase-item", "country of origin", "country where the work was created", ["origin"]),
    "P1001": ("wikibase-item", "applies to jurisdiction", "territory to which the office applies",
              ["jurisdiction"]),
    "P1365": ("wikibase-item", "replaces", "predecessor in the position", ["predecessor", "preceded by"]),
    "P1366": ("wikibase-item", "replaced by", "successor in the position", ["successor", "succeeded by"]),
    "P1376": ("wikibase-item", "capital of", "territory of which this place is or was the capital",
              ["is capital of"]),
    "P1412": ("wikibase-item", "languages spoken, written or signed", "language the person uses",
              ["languages spoken", "speaks"]),
    "P1082": ("quantity", "population", "number of people inhabiting the place",
              ["inhabitants", "number of inhabitants"]),
    "P569": ("time", "date of birth", "date on which the person was born", ["born on", "birth date", "DOB"]),
    "P570": ("time", "date of death", "date on which the person died", ["died on", "death date", "DOD"]),
    "P571": ("time", "inception", "date the item was created or founded", ["created", "founded"]),
    "P577": ("time", "publication date", "date the work was first published or released",
             ["release date", "published", "date of publication"]),
    "P580": ("time", "start time", "time at which the statement starts to hold", ["from", "since", "began"]),
    "P582": ("time", "end time", "time at which the statement stops holding", ["until", "to", "ended"]),
    "P585": ("time", "point in time", "time at which the statement holds", ["as of", "date", "at time"]),
    "P813": ("time", "retrieved", "date the source was consulted", ["accessed", "access date"]),
    "P625": ("globe-coordinate", "coordinate location", "geographic coordinates of the place",
             ["coordinates", "location", "geo"]),
    "P1448": ("monolingualtext", "official name", "official name of the subject in its official language",
              ["formal name"]),
    "P474": ("string", "country calling code", "telephone calling code of the country",
             ["dialing code", "telephone prefix"]),
    "P297": ("external-id", "ISO 3166-1 alpha-2 code", "two-letter country identifier from ISO 3166-1",
             ["ISO 3166-1", "country code", "alpha-2"]),
    "P1566": ("external-id", "GeoNames ID", "identifier in the GeoNames geographical database", ["GeoNames"]),
    "P214": ("external-id", "VIAF ID", "identifier in the Virtual International Authority File", ["VIAF"]),
    "P227": ("external-id", "GND ID", "identifier in the German National Library authority file",
             ["GND", "Gemeinsame Normdatei"]),
}

# --------------------------------------------------------------------------
# German / French labels (and a few aliases) for a subset of entities
# --------------------------------------------------------------------------
LOCAL = {
    "Q183": {"de": ("Deutschland", ["BRD", "Bundesrepublik Deutschland"]),
             "fr": ("Allemagne", ["RFA", "République fédérale d'Allemagne"])},
    "Q142": {"de": ("Frankreich", []), "fr": ("France", ["République française"])},
    "Q145": {"de": ("Vereinigtes Königreich", ["Großbritannien"]), "fr": ("Royaume-Uni", [])},
    "Q30": {"de": ("Vereinigte Staaten", ["USA", "Vereinigte Staaten von Amerika"]),
            "fr": ("États-Unis", ["États-Unis d'Amérique"])},
    "Q38": {"de": ("Italien", []), "fr": ("Italie", [])},
    "Q29": {"de": ("Spanien", []), "fr": ("Espagne", [])},
    "Q55": {"de": ("Niederlande", ["Holland"]), "fr": ("Pays-Bas", [])},
    "Q39": {"de": ("Schweiz", []), "fr": ("Suisse", [])},
    "Q40": {"de": ("Österreich", []), "fr": ("Autriche", [])},
    "Q36": {"de": ("Polen", []), "fr": ("Pologne", [])},
    "Q159": {"de": ("Russland", ["Russische Föderation"]), "fr": ("Russie", [])},
    "Q148": {"de": ("Volksrepublik China", ["China"]), "fr": ("République populaire de Chine", ["Chine"])},
    "Q17": {"de": ("Japan", []), "fr": ("Japon", [])},
    "Q155": {"de": ("Brasilien", []), "fr": ("Brésil", [])},
    "Q31": {"de": ("Belgien", []), "fr": ("Belgique", [])},
    "Q43": {"de": ("Türkei", []), "fr": ("Turquie", [])},
    "Q64": {"de": ("Berlin", []), "fr": ("Berlin", [])},
    "Q90": {"de": ("Paris", []), "fr": ("Paris", ["Ville Lumière"])},
    "Q84": {"de": ("London", []), "fr": ("Londres", [])},
    "Q1741": {"de": ("Wien", []), "fr": ("Vienne", [])},
    "Q220": {"de": ("Rom", []), "fr": ("Rome", [])},
    "Q649": {"de": ("Moskau", []), "fr": ("Moscou", [])},
    "Q270": {"de": ("Warschau", []), "fr": ("Varsovie", [])},
    "Q239": {"de": ("Brüssel", []), "fr": ("Bruxelles", [])},
    "Q365": {"de": ("Köln", []), "fr": ("Cologne", [])},
    "Q586": {"de": ("Bonn", ["Bundesstadt Bonn"]), "fr": ("Bonn", [])},
    "Q956": {"de": ("Peking", []), "fr": ("Pékin", [])},
    "Q188": {"de": ("Deutsch", ["deutsche Sprache"]), "fr": ("allemand", [])},
    "Q150": {"de": ("Französisch", []), "fr": ("français", ["langue française"])},
    "Q1860": {"de": ("Englisch", []), "fr": ("anglais", [])},
    "Q4916": {"de": ("Euro", []), "fr": ("euro", [])},
    "Q937": {"de": ("Albert Einstein", []), "fr": ("Albert Einstein", [])},
    "Q567": {"de": ("Angela Merkel", ["Angela Dorothea Merkel"]), "fr": ("Angela Merkel", [])},
    "Q5879": {"de": ("Johann Wolfgang von Goethe", ["Goethe"]), "fr": ("Johann Wolfgang von Goethe", ["Goethe"])},
    "Q4970706": {"de": ("Bundeskanzler", ["Bundeskanzlerin"]), "fr": ("chancelier fédéral d'Allemagne", [])},
    "Q5": {"de": ("Mensch", []), "fr": ("être humain", [])},
    "Q515": {"de": ("Stadt", []), "fr": ("ville", [])},
    "Q5119": {"de": ("Hauptstadt", []), "fr": ("capitale", [])},
    "Q6256": {"de": ("Staat", ["Land"]), "fr": ("pays", [])},
}

SITES = ["enwiki", "dewiki", "frwiki", "eswiki", "itwiki", "nlwiki", "plwiki", "ptwiki", "svwiki",
         "cawiki", "fiwiki", "nowiki", "cswiki", "huwiki", "trwiki", "idwiki", "viwiki", "rowiki",
         "dawiki", "euwiki", "glwiki", "hrwiki", "skwiki", "slwiki", "etwiki", "lvwiki", "ltwiki",
         "mswiki", "afwiki", "eowiki"]

# --------------------------------------------------------------------------
# classes and other small vocabularies
# id, label, description, aliases, fame, claims {pid: [values]}
# --------------------------------------------------------------------------
CLASSES = [
    ("Q5", "human", "member of the species Homo sapiens", ["person", "people", "human being"], 28,
     {"P279": ["Q215627"]}),
    ("Q215627", "person", "being that has personhood", ["individual"], 20, {}),
    ("Q6256", "country", "distinct political territory, usually a state", ["nation", "land"], 28,
     {"P279": ["Q82794"]}),
    ("Q3624078", "sovereign state", "state with its own government and full independence",
     ["independent state", "sovereign country"], 22, {"P279": ["Q6256"]}),
    ("Q515", "city", "large and permanent human settlement", ["town", "metropolis"], 28,
     {"P279": ["Q486972"]}),
    ("Q5119", "capital", "city that is the seat of government of a country or region",
     ["capital city", "seat of government"], 24, {"P279": ["Q515"]}),
    ("Q486972", "human settlement", "community of people living in a particular place",
     ["settlement", "locality"], 18, {"P279": ["Q2221906"]}),
    ("Q2221906", "geographic location", "point or area on the surface of the Earth",
     ["location", "place"], 12, {}),
    ("Q82794", "geographic region", "area of the Earth's surface defined by shared features",
     ["region"], 16, {"P279": ["Q2221906"]}),
    ("Q5107", "continent", "very large landmass of the Earth", [], 28, {"P279": ["Q82794"]}),
    ("Q34770", "language", "particular system of communication used by a community",
     ["natural language"], 25, {}),
    ("Q8142", "currency", "system of money in common use in a country", ["money"], 24, {}),
    ("Q12737077", "occupation", "activity a person does to earn a living or as a calling",
     ["job", "line of work"], 10, {}),
    ("Q28640", "profession", "occupation that requires special training", ["vocation"], 20,
     {"P279": ["Q12737077"]}),
    ("Q838948", "work of art", "creative work of artistic value", ["artwork", "piece of art"], 18, {}),
    ("Q4502142", "visual artwork", "work of art meant to be looked at", ["visual art work"], 8,
     {"P279": ["Q838948"]}),
    ("Q3305213", "painting", "picture made with paint on a surface", ["painted picture"], 24,
     {"P279": ["Q4502142"]}),
    ("Q11424", "film", "sequence of moving images telling a story or documenting events",
     ["movie", "motion picture", "feature film"], 28, {"P279": ["Q838948"]}),
    ("Q47461344", "written work", "work that consists of written text", ["text"], 6, {}),
    ("Q7725634", "literary work", "written work valued for its artistic merit",
     ["work of literature"], 12, {"P279": ["Q47461344", "Q838948"]}),
    ("Q8261", "novel", "long work of narrative prose fiction", [], 26, {"P279": ["Q7725634"]}),
    ("Q48352", "head of state", "official who represents a state at the highest level",
     ["chief of state"], 20, {}),
    ("Q2285706", "head of government", "official who leads the executive branch",
     ["government leader"], 16, {}),
    ("Q6581097", "male", "male sex or gender", ["man", "M"], 16, {}),
    ("Q6581072", "female", "female sex or gender", ["woman", "F"], 16, {}),
    ("Q7191", "Nobel Prize", "set of annual international awards established by Alfred Nobel's will",
     ["Nobel"], 30, {}),
    ("Q38104", "Nobel Prize in Physics", "annual Nobel award for physics", ["physics Nobel"], 24,
     {"P279": ["Q7191"]}),
    ("Q44585", "Nobel Prize in Chemistry", "annual Nobel award for chemistry", ["chemistry Nobel"], 22,
     {"P279": ["Q7191"]}),
    ("Q37922", "Nobel Prize in Literature", "annual Nobel award for literature", ["literature Nobel"], 24,
     {"P279": ["Q7191"]}),
    ("Q35637", "Nobel Peace Prize", "annual Nobel award for work for peace", ["peace prize"], 25,
     {"P279": ["Q7191"]}),
    ("Q328", "English Wikipedia", "English-language edition of Wikipedia", ["enwiki"], 10,
     {"P407": ["Q1860"]}),
    ("Q48183", "German Wikipedia", "German-language edition of Wikipedia", ["dewiki"], 8,
     {"P407": ["Q188"]}),
]

POSITIONS = [
    ("Q11696", "President of the United States", "head of state and of government of the United States",
     ["US President", "POTUS"], 28, ["Q48352", "Q2285706"], "Q30"),
    ("Q14211", "Prime Minister of the United Kingdom", "head of government of the United Kingdom",
     ["British Prime Minister", "UK PM"], 22, ["Q2285706"], "Q145"),
    ("Q4970706", "Chancellor of Germany", "head of government of the Federal Republic of Germany",
     ["Federal Chancellor", "German Chancellor", "Bundeskanzler"], 20, ["Q2285706"], "Q183"),
    ("Q191954", "President of France", "head of state of the French Republic",
     ["President of the French Republic", "French President"], 20, ["Q48352"], "Q142"),
    ("Q218295", "President of Russia", "head of state of the Russian Federation",
     ["Russian President"], 18, ["Q48352"], "Q159"),
    ("Q192711", "Prime Minister of India", "head of government of India", ["Indian Prime Minister"], 16,
     ["Q2285706"], "Q668"),
]

# id, label, description, aliases, fame, kind (profession/occupation), parent class
OCCUPATIONS = [
    ("Q901", "scientist", "person doing systematic research", ["researcher"], 24, "Q28640", None),
    ("Q169470", "physicist", "scientist who studies physics", [], 22, "Q28640", "Q901"),
    ("Q593644", "chemist", "scientist who studies chemistry", [], 20, "Q28640", "Q901"),
    ("Q864503", "biologist", "scientist who studies living organisms", ["naturalist"], 18, "Q28640", "Q901"),
    ("Q170790", "mathematician", "person who does research in mathematics", [], 22, "Q28640", "Q901"),
    ("Q11063", "astronomer", "scientist who studies celestial objects", [], 20, "Q28640", "Q901"),
    ("Q82594", "computer scientist", "scientist who studies computation", [], 16, "Q28640", "Q901"),
    ("Q205375", "inventor", "person who creates new devices or methods", [], 18, "Q12737077", None),
    ("Q81096", "engineer", "professional who designs and builds technical systems", [], 22, "Q28640", None),
    ("Q39631", "physician", "professional who practises medicine", ["doctor", "medical doctor"], 22,
     "Q28640", None),
    ("Q1622272", "university teacher", "person teaching at a university", ["professor", "lecturer"], 10,
     "Q28640", None),
    ("Q36180", "writer", "person who uses written words to communicate ideas", ["author"], 24,
     "Q12737077", None),
    ("Q6625963", "novelist", "writer of novels", [], 16, "Q12737077", "Q36180"),
    ("Q49757", "poet", "person who writes poetry", [], 22, "Q12737077", "Q36180"),
    ("Q214917", "playwright", "person who writes plays", ["dramatist"], 18, "Q12737077", "Q36180"),
    ("Q1930187", "journalist", "person who gathers and reports news", ["reporter"], 22, "Q28640", None),
    ("Q4964182", "philosopher", "person who studies philosophy", [], 22, "Q12737077", None),
    ("Q188094", "economist", "expert in the study of economics", [], 18, "Q28640", None),
    ("Q82955", "politician", "person involved in politics", [], 24, "Q12737077", None),
    ("Q40348", "lawyer", "legal professional who practises law", ["attorney", "barrister", "solicitor"], 22,
     "Q28640", None),
    ("Q189290", "military officer", "member of an armed force holding a commission", ["officer"], 16,
     "Q28640", None),
    ("Q116", "monarch", "person who heads a monarchy", ["king", "queen", "sovereign"], 24, "Q12737077",
     None),
    ("Q483501", "artist", "person who creates art", [], 22, "Q12737077", None),
    ("Q1028181", "painter", "artist who paints pictures", [], 20, "Q12737077", "Q483501"),
    ("Q1281618", "sculptor", "artist who makes three-dimensional works", [], 18, "Q12737077", "Q483501"),
    ("Q42973", "architect", "person who designs buildings", [], 20, "Q28640", None),
    ("Q639669", "musician", "person who performs or composes music", [], 20, "Q12737077", None),
    ("Q36834", "composer", "person who writes music", [], 20, "Q12737077", "Q639669"),
    ("Q33999", "actor", "person who performs in theatre, film or television", ["actress"], 22,
     "Q28640", None),
    ("Q2526255", "film director", "person who directs the making of films", ["movie director"], 18,
     "Q28640", None),
    ("Q3282637", "film producer", "person who oversees the making of films", ["movie producer"], 12,
     "Q28640", None),
    ("Q937857", "association football player", "person who plays association football",
     ["footballer", "soccer player"], 16, "Q12737077", None),
    ("Q43845", "businessperson", "person engaged in commerce or industry", ["businessman", "businesswoman"],
     18, "Q12737077", None),
    ("Q131524", "entrepreneur", "person who starts and runs businesses", [], 20, "Q12737077", None),
]

CONTINENTS = [
    ("Q15", "Africa", "continent south of Europe, between the Atlantic and Indian oceans", [], 30),
    ("Q48", "Asia", "largest continent, mostly in the Northern and Eastern hemispheres", [], 30),
    ("Q46", "Europe", "continent west of Asia, north of the Mediterranean Sea", [], 30),
    ("Q49", "North America", "continent in the Northern and Western hemispheres", [], 28),
    ("Q18", "South America", "continent mostly in the Southern and Western hemispheres", [], 28),
    ("Q51", "Antarctica", "southernmost continent, around the South Pole", [], 26),
    ("Q55643", "Oceania", "region of the Pacific including Australia and New Zealand",
     ["Australia and Oceania"], 24),
]

LANGUAGES = [
    ("Q1860", "English", "West Germanic language that originated in England", ["English language"], 30),
    ("Q150", "French", "Romance language that originated in France", ["French language"], 30),
    ("Q188", "German", "West Germanic language of Central Europe", ["German language"], 30),
    ("Q652", "Italian", "Romance language of Italy", ["Italian language"], 28),
    ("Q1321", "Spanish", "Romance language that originated in Spain", ["Castilian", "Spanish language"], 30),
    ("Q5146", "Portuguese", "Romance language that originated in Portugal", ["Portuguese language"], 28),
    ("Q7411", "Dutch", "West Germanic language of the Netherlands and Belgium", ["Netherlandic", "Flemish"],
     26),
    ("Q9051", "Luxembourgish", "West Germanic language of Luxembourg", ["Letzeburgesch"], 16),
    ("Q13199", "Romansh", "Romance language of the Swiss canton of Graubünden", ["Rumantsch"], 14),
    ("Q809", "Polish", "West Slavic language of Poland", ["Polish language"], 26),
    ("Q9056", "Czech", "West Slavic language of the Czech Republic", ["Czech language"], 24),
    ("Q9067", "Hungarian", "Uralic language of Hungary", ["Magyar"], 24),
    ("Q9129", "Greek", "Hellenic language of Greece and Cyprus", ["Greek language"], 26),
    ("Q256", "Turkish", "Turkic language of Turkey", ["Turkish language"], 26),
    ("Q7737", "Russian", "East Slavic language of Russia", ["Russian language"], 30),
    ("Q8798", "Ukrainian", "East Slavic language of Ukraine", ["Ukrainian language"], 24),
    ("Q9027", "Swedish", "North Germanic language of Sweden and Finland", ["Swedish language"], 24),
    ("Q9043", "Norwegian", "North Germanic language of Norway", ["Norwegian language"], 22),
    ("Q1412", "Finnish", "Uralic language of Finland", ["Finnish language"], 24),
    ("Q9035", "Danish", "North Germanic language of Denmark", ["Danish language"], 22),
    ("Q9142", "Irish", "Celtic language of Ireland", ["Irish Gaelic", "Gaeilge"], 20),
    ("Q6654", "Croatian", "South Slavic language of Croatia", ["Croatian language"], 20),
    ("Q727694", "Standard Mandarin", "standard form of Chinese based on the Beijing dialect",
     ["Mandarin", "Putonghua", "Standard Chinese"], 22),
    ("Q5287", "Japanese", "Japonic language of Japan", ["Japanese language"], 30),
    ("Q1568", "Hindi", "Indo-Aryan language of northern India", ["Hindi language"], 26),
    ("Q1617", "Urdu", "Indo-Aryan language of Pakistan and India", ["Urdu language"], 24),
    ("Q9240", "Indonesian", "Austronesian language of Indonesia", ["Bahasa Indonesia"], 22),
    ("Q9176", "Korean", "Koreanic language of Korea", ["Korean language"], 26),
    ("Q9199", "Vietnamese", "Austroasiatic language of Vietnam", ["Vietnamese language"], 22),
    ("Q9217", "Thai", "Kra-Dai language of Thailand", ["Thai language"], 22),
    ("Q9228", "Burmese", "Sino-Tibetan language of Myanmar", ["Myanmar language"], 18),
    ("Q9237", "Malay", "Austronesian language of Malaysia, Brunei and Singapore", ["Bahasa Melayu"], 20),
    ("Q9252", "Kazakh", "Turkic language of Kazakhstan", ["Kazakh language"], 18),
    ("Q9168", "Persian", "Iranian language of Iran, Afghanistan and Tajikistan", ["Farsi"], 26),
    ("Q13955", "Arabic", "Semitic language of the Arab world", ["Arabic language"], 30),
    ("Q7838", "Swahili", "Bantu language of East Africa", ["Kiswahili"], 22),
    ("Q14196", "Afrikaans", "West Germanic language of South Africa and Namibia", [], 20),
    ("Q36451", "Māori", "Polynesian language of the Māori people of New Zealand", ["Maori", "te reo Māori"],
     16),
]

CURRENCIES = [
    ("Q4916", "euro", "currency of the eurozone", ["EUR", "€"], 28),
    ("Q4917", "United States dollar", "currency of the United States", ["US dollar", "USD", "$"], 28),
    ("Q25224", "pound sterling", "currency of the United Kingdom", ["GBP", "British pound", "£"], 24),
    ("Q8146", "Japanese yen", "currency of Japan", ["yen", "JPY"], 24),
    ("Q39099", "renminbi", "currency of the People's Republic of China", ["yuan", "CNY", "RMB"], 22),
    ("Q41044", "Russian ruble", "currency of Russia", ["ruble", "rouble", "RUB"], 20),
    ("Q80524", "Indian rupee", "currency of India", ["INR", "rupee"], 20),
    ("Q173117", "Brazilian real", "currency of Brazil", ["real", "BRL"], 18),
    ("Q25344", "Swiss franc", "currency of Switzerland and Liechtenstein", ["CHF", "franc"], 18),
    ("Q1104069", "Canadian dollar", "currency of Canada", ["CAD", "loonie"], 16),
    ("Q259502", "Australian dollar", "currency of Australia", ["AUD"], 16),
    ("Q4730", "Mexican peso", "currency of Mexico", ["MXN", "peso"], 16),
    ("Q172872", "Turkish lira", "currency of Turkey", ["TRY", "lira"], 16),
    ("Q203567", "Nigerian naira", "currency of Nigeria", ["naira", "NGN"], 12),
    ("Q181907", "South African rand", "currency of South Africa", ["rand", "ZAR"], 14),
    ("Q188289", "Pakistani rupee", "currency of Pakistan", ["PKR"], 12),
    ("Q202040", "South Korean won", "currency of South Korea", ["won", "KRW"], 14),
    ("Q123213", "Polish złoty", "currency of Poland", ["złoty", "zloty", "PLN"], 14),
    ("Q122922", "Swedish krona", "currency of Sweden", ["SEK", "krona"], 14),
    ("Q132643", "Norwegian krone", "currency of Norway", ["NOK"], 12),
    ("Q25417", "Danish krone", "currency of Denmark", ["DKK"], 12),
    ("Q173751", "Kazakhstani tenge", "currency of Kazakhstan", ["tenge", "KZT"], 10),
    ("Q201875", "Myanmar kyat", "currency of Myanmar", ["kyat", "MMK"], 8),
    ("Q4589", "Tanzanian shilling", "currency of Tanzania", ["TZS"], 8),
    ("Q1472704", "New Zealand dollar", "currency of New Zealand", ["NZD", "kiwi dollar"], 12),
]

# --------------------------------------------------------------------------
# countries
# id, label, description, aliases, ISO code, continents, official languages,
# currencies, fame, calling code
# --------------------------------------------------------------------------
COUNTRIES = [
    ("Q142", "France", "country in Western Europe", ["French Republic"], "FR", ["Q46"], ["Q150"],
     ["Q4916"], 30, "+33"),
    ("Q183", "Germany", "country in Central Europe", ["Federal Republic of Germany", "FRG", "Deutschland"],
     "DE", ["Q46"], ["Q188"], ["Q4916"], 30, "+49"),
    ("Q145", "United Kingdom", "country in north-western Europe",
     ["UK", "U.K.", "Britain", "United Kingdom of Great Britain and Northern Ireland"], "GB", ["Q46"],
     ["Q1860"], ["Q25224"], 30, "+44"),
    ("Q38", "Italy", "country in Southern Europe", ["Italian Republic", "Italia"], "IT", ["Q46"], ["Q652"],
     ["Q4916"], 30, "+39"),
    ("Q29", "Spain", "country in south-western Europe", ["Kingdom of Spain", "España"], "ES", ["Q46"],
     ["Q1321"], ["Q4916"], 30, None),
    ("Q45", "Portugal", "country in south-western Europe", ["Portuguese Republic"], "PT", ["Q46"],
     ["Q5146"], ["Q4916"], 28, None),
    ("Q55", "Netherlands", "country in north-western Europe", ["Holland", "the Netherlands"], "NL",
     ["Q46"], ["Q7411"], ["Q4916"], 28, None),
    ("Q31", "Belgium", "country in Western Europe", ["Kingdom of Belgium"], "BE", ["Q46"],
     ["Q7411", "Q150", "Q188"], ["Q4916"], 28, None),
    ("Q32", "Luxembourg", "small country in Western Europe", ["Grand Duchy of Luxembourg"], "LU", ["Q46"],
     ["Q9051", "Q150", "Q188"], ["Q4916"], 24, None),
    ("Q39", "Switzerland", "country in Central Europe", ["Swiss Confederation", "Helvetia"], "CH", ["Q46"],
     ["Q188", "Q150", "Q652", "Q13199"], ["Q25344"], 28, "+41"),
    ("Q40", "Austria", "country in Central Europe", ["Republic of Austria"], "AT", ["Q46"], ["Q188"],
     ["Q4916"], 28, None),
    ("Q36", "Poland", "country in Central Europe", ["Republic of Poland"], "PL", ["Q46"], ["Q809"],
     ["Q123213"], 28, None),
    ("Q213", "Czech Republic", "country in Central Europe", ["Czechia"], "CZ", ["Q46"], ["Q9056"], [], 26,
     None),
    ("Q28", "Hungary", "country in Central Europe", [], "HU", ["Q46"], ["Q9067"], [], 26, None),
    ("Q41", "Greece", "country in south-eastern Europe", ["Hellenic Republic", "Hellas"], "GR", ["Q46"],
     ["Q9129"], ["Q4916"], 28, None),
    ("Q43", "Turkey", "country spanning Anatolia and south-eastern Europe",
     ["Türkiye", "Republic of Turkey"], "TR", ["Q48", "Q46"], ["Q256"], ["Q172872"], 28, None),
    ("Q159", "Russia", "country spanning Eastern Europe and Northern Asia", ["Russian Federation"], "RU",
     ["Q46", "Q48"], ["Q7737"], ["Q41044"], 30, "+7"),
    ("Q212", "Ukraine", "country in Eastern Europe", [], "UA", ["Q46"], ["Q8798"], [], 28, None),
    ("Q34", "Sweden", "country in Northern Europe", ["Kingdom of Sweden"], "SE", ["Q46"], ["Q9027"],
     ["Q122922"], 28, None),
    ("Q20", "Norway", "country in Northern Europe", ["Kingdom of Norway"], "NO", ["Q46"], ["Q9043"],
     ["Q132643"], 28, None),
    ("Q33", "Finland", "country in Northern Europe", ["Republic of Finland", "Suomi"], "FI", ["Q46"],
     ["Q1412", "Q9027"], ["Q4916"], 27, None),
    ("Q35", "Denmark", "country in Northern Europe", ["Kingdom of Denmark"], "DK", ["Q46"], ["Q9035"],
     ["Q25417"], 27, None),
    ("Q27", "Ireland", "country in north-western Europe", ["Republic of Ireland", "Éire"], "IE", ["Q46"],
     ["Q9142", "Q1860"], ["Q4916"], 27, None),
    ("Q224", "Croatia", "country in south-eastern Europe", ["Republic of Croatia", "Hrvatska"], "HR",
     ["Q46"], ["Q6654"], [], 25, None),
    ("Q30", "United States", "country in North America",
     ["USA", "United States of America", "America", "U.S.", "US", "U.S.A."], "US", ["Q49"], ["Q1860"],
     ["Q4917"], 30, "+1"),
    ("Q16", "Canada", "country in North America", [], "CA", ["Q49"], ["Q1860", "Q150"], ["Q1104069"], 29,
     None),
    ("Q96", "Mexico", "country in North America", ["United Mexican States"], "MX", ["Q49"], ["Q1321"],
     ["Q4730"], 28, None),
    ("Q155", "Brazil", "country in South America", ["Federative Republic of Brazil", "Brasil"], "BR",
     ["Q18"], ["Q5146"], ["Q173117"], 30, "+55"),
    ("Q414", "Argentina", "country in South America", ["Argentine Republic"], "AR", ["Q18"], ["Q1321"],
     [], 28, None),
    ("Q298", "Chile", "country in South America", ["Republic of Chile"], "CL", ["Q18"], ["Q1321"], [], 27,
     None),
    ("Q739", "Colombia", "country in South America", ["Republic of Colombia"], "CO", ["Q18"], ["Q1321"],
     [], 27, None),
    ("Q419", "Peru", "country in South America", ["Republic of Peru"], "PE", ["Q18"], ["Q1321"], [], 27,
     None),
    ("Q148", "People's Republic of China", "country in East Asia", ["China", "PRC"], "CN", ["Q48"],
     ["Q727694"], ["Q39099"], 30, "+86"),
    ("Q17", "Japan", "island country in East Asia", ["Nippon", "Nihon"], "JP", ["Q48"], ["Q5287"],
     ["Q8146"], 30, "+81"),
    ("Q668", "India", "country in South Asia", ["Republic of India", "Bharat"], "IN", ["Q48"],
     ["Q1568", "Q1860"], ["Q80524"], 30, "+91"),
    ("Q843", "Pakistan", "country in South Asia", ["Islamic Republic of Pakistan"], "PK", ["Q48"],
     ["Q1617", "Q1860"], ["Q188289"], 28, None),
    ("Q252", "Indonesia", "country in South-East Asia", ["Republic of Indonesia"], "ID", ["Q48"],
     ["Q9240"], [], 28, None),
    ("Q884", "South Korea", "country in East Asia", ["Republic of Korea", "Korea"], "KR", ["Q48"],
     ["Q9176"], ["Q202040"], 28, None),
    ("Q423", "North Korea", "country in East Asia", ["Democratic People's Republic of Korea", "DPRK"],
     "KP", ["Q48"], ["Q9176"], [], 26, None),
    ("Q881", "Vietnam", "country in South-East Asia", ["Viet Nam", "Socialist Republic of Vietnam"], "VN",
     ["Q48"], ["Q9199"], [], 27, None),
    ("Q869", "Thailand", "country in South-East Asia", ["Kingdom of Thailand", "Siam"], "TH", ["Q48"],
     ["Q9217"], [], 27, None),
    ("Q836", "Myanmar", "country in South-East Asia", ["Burma", "Republic of the Union of Myanmar"], "MM",
     ["Q48"], ["Q9228"], ["Q201875"], 25, None),
    ("Q833", "Malaysia", "country in South-East Asia", [], "MY", ["Q48"], ["Q9237"], [], 26, None),
    ("Q334", "Singapore", "city-state in South-East Asia", ["Republic of Singapore"], "SG", ["Q48"],
     ["Q1860", "Q9237", "Q727694"], [], 27, None),
    ("Q232", "Kazakhstan", "country in Central Asia", ["Republic of Kazakhstan"], "KZ", ["Q48", "Q46"],
     ["Q9252", "Q7737"], ["Q173751"], 25, None),
    ("Q794", "Iran", "country in Western Asia", ["Islamic Republic of Iran", "Persia"], "IR", ["Q48"],
     ["Q9168"], [], 28, None),
    ("Q851", "Saudi Arabia", "country in Western Asia", ["Kingdom of Saudi Arabia", "KSA"], "SA", ["Q48"],
     ["Q13955"], [], 26, None),
    ("Q79", "Egypt", "country in North Africa", ["Arab Republic of Egypt"], "EG", ["Q15"], ["Q13955"], [],
     28, None),
    ("Q1033", "Nigeria", "country in West Africa", ["Federal Republic of Nigeria"], "NG", ["Q15"],
     ["Q1860"], ["Q203567"], 26, None),
    ("Q114", "Kenya", "country in East Africa", ["Republic of Kenya"], "KE", ["Q15"], ["Q7838", "Q1860"],
     [], 25, None),
    ("Q924", "Tanzania", "country in East Africa", ["United Republic of Tanzania"], "TZ", ["Q15"],
     ["Q7838", "Q1860"], ["Q4589"], 24, None),
    ("Q258", "South Africa", "country at the southern tip of Africa", ["Republic of South Africa", "RSA"],
     "ZA", ["Q15"], ["Q1860", "Q14196"], ["Q181907"], 27, None),
    ("Q1028", "Morocco", "country in North Africa", ["Kingdom of Morocco"], "MA", ["Q15"], ["Q13955"], [],
     25, None),
    ("Q1008", "Côte d'Ivoire", "country in West Africa", ["Ivory Coast", "Republic of Côte d'Ivoire"],
     "CI", ["Q15"], ["Q150"], [], 22, None),
    ("Q408", "Australia", "country in Oceania", ["Commonwealth of Australia"], "AU", ["Q55643"],
     ["Q1860"], ["Q259502"], 30, "+61"),
    ("Q664", "New Zealand", "island country in Oceania", ["Aotearoa"], "NZ", ["Q55643"],
     ["Q1860", "Q36451"], ["Q1472704"], 27, None),
]

# official names (monolingual text)
OFFICIAL_NAMES = {
    "Q142": [("République française", "fr")],
    "Q183": [("Bundesrepublik Deutschland", "de")],
    "Q145": [("United Kingdom of Great Britain and Northern Ireland", "en")],
    "Q30": [("United States of America", "en")],
    "Q38": [("Repubblica Italiana", "it")],
    "Q29": [("Reino de España", "es")],
    "Q39": [("Schweizerische Eidgenossenschaft", "de"), ("Confédération suisse", "fr")],
    "Q159": [("Российская Федерация", "ru")],
    "Q155": [("República Federativa do Brasil", "pt")],
    "Q17": [("日本国", "ja")],
}

# rough country coordinates, 1 degree precision
COUNTRY_COORDS = {"Q183": (51.0, 10.0), "Q39": (47.0, 8.0), "Q17": (36.0, 138.0), "Q29": (40.0, -4.0)}

# population: country -> [(amount, census/estimate year)], latest value gets preferred rank
POPULATION = {
    "Q30": [(308745538, "2010"), (331449281, "2020")],
    "Q148": [(1339724852, "2010"), (1411778724, "2020")],
    "Q668": [(1210854977, "2011")],
    "Q17": [(127094745, "2015"), (126146099, "2020")],
    "Q183": [(80219695, "2011")],
    "Q145": [(63182000, "2011")],
    "Q38": [(59433744, "2011")],
    "Q159": [(142856536, "2010")],
    "Q155": [(190755799, "2010")],
    "Q96": [(112336538, "2010"), (126014024, "2020")],
    "Q16": [(35151728, "2016"), (36991981, "2021")],
    "Q408": [(23401892, "2016"), (25422788, "2021")],
    "Q843": [(207774520, "2017"), (241499431, "2023")],
    "Q252": [(237641326, "2010"), (270203917, "2020")],
    "Q1033": [(140431790, "2006")],
    "Q258": [(51770560, "2011"), (62027503, "2022")],
    "Q27": [(4761865, "2016"), (5149139, "2022")],
    "Q664": [(4699755, "2018")],
    "Q114": [(47564296, "2019")],
    "Q36": [(38036118, "2021")],
    "Q881": [(96208984, "2019")],
    "Q1028": [(33848242, "2014")],
    "Q924": [(61741120, "2022")],
}

# land borders between countries in this file (symmetric statements are generated)
BORDERS = [
    ("Q142", "Q31"), ("Q142", "Q32"), ("Q142", "Q183"), ("Q142", "Q39"), ("Q142", "Q38"), ("Q142", "Q29"),
    ("Q142", "Q155"),
    ("Q183", "Q35"), ("Q183", "Q36"), ("Q183", "Q213"), ("Q183", "Q40"), ("Q183", "Q39"), ("Q183", "Q32"),
    ("Q183", "Q31"), ("Q183", "Q55"),
    ("Q55", "Q31"), ("Q31", "Q32"), ("Q39", "Q38"), ("Q39", "Q40"), ("Q40", "Q213"), ("Q40", "Q28"),
    ("Q40", "Q38"), ("Q29", "Q45"), ("Q29", "Q1028"), ("Q36", "Q213"), ("Q36", "Q212"), ("Q36", "Q159"),
    ("Q28", "Q212"), ("Q28", "Q224"), ("Q41", "Q43"), ("Q43", "Q794"), ("Q159", "Q20"), ("Q159", "Q33"),
    ("Q159", "Q212"), ("Q159", "Q232"), ("Q159", "Q148"), ("Q159", "Q423"), ("Q34", "Q20"), ("Q34", "Q33"),
    ("Q20", "Q33"), ("Q27", "Q145"),
    ("Q30", "Q16"), ("Q30", "Q96"), ("Q155", "Q414"), ("Q155", "Q739"), ("Q155", "Q419"), ("Q414", "Q298"),
    ("Q298", "Q419"), ("Q739", "Q419"),
    ("Q148", "Q423"), ("Q148", "Q881"), ("Q148", "Q836"), ("Q148", "Q668"), ("Q148", "Q843"),
    ("Q148", "Q232"), ("Q668", "Q843"), ("Q668", "Q836"), ("Q843", "Q794"), ("Q423", "Q884"),
    ("Q869", "Q836"), ("Q869", "Q833"), ("Q833", "Q252"),
    ("Q114", "Q924"),
]

# --------------------------------------------------------------------------
# cities: id, label, description (None: generated for capitals), aliases,
# country, fame, coordinates, GeoNames id, located in (P131)
# --------------------------------------------------------------------------
CITIES = [
    ("Q90", "Paris", None, ["City of Light"], "Q142", 30, (48.8535, 2.3484), "2988507", None),
    ("Q64", "Berlin", None, ["Berlin, Germany"], "Q183", 30, (52.5174, 13.3951), "2950159", "Q183"),
    ("Q586", "Bonn", "city on the Rhine in Germany, former seat of the West German government",
     ["Federal City of Bonn"], "Q183", 22, None, None, None),
    ("Q84", "London", None, ["London, England", "Greater London"], "Q145", 30, (51.5074, -0.1278),
     "2643743", None),
    ("Q220", "Rome", None, ["Roma", "Eternal City"], "Q38", 30, (41.8933, 12.4829), None, None),
    ("Q2807", "Madrid", None, [], "Q29", 28, (40.4168, -3.7035), None, None),
    ("Q597", "Lisbon", None, ["Lisboa"], "Q45", 27, None, None, None),
    ("Q727", "Amsterdam", None, [], "Q55", 28, None, None, None),
    ("Q239", "Brussels", None, ["Bruxelles", "Brussel"], "Q31", 27, None, None, None),
    ("Q1842", "Luxembourg", None, ["Luxembourg City"], "Q32", 20, None, None, None),
    ("Q70", "Bern", "federal city and seat of government of Switzerland", ["Berne"], "Q39", 25, None, None, None),
    ("Q1741", "Vienna", None, ["Wien"], "Q40", 29, (48.2084, 16.3725), None, "Q40"),
    ("Q270", "Warsaw", None, ["Warszawa"], "Q36", 27, None, None, None),
    ("Q1085", "Prague", None, ["Praha"], "Q213", 27, None, None, None),
    ("Q1781", "Budapest", None, [], "Q28", 27, None, None, None),
    ("Q1524", "Athens", None, ["Athina"], "Q41", 28, None, None, None),
    ("Q3640", "Ankara", None, ["Angora"], "Q43", 25, (39.9208, 32.854), None, None),
    ("Q406", "Istanbul", "largest city of Turkey, on both sides of the Bosporus",
     ["Constantinople", "Byzantium"], "Q43", 29, None, None, None),
    ("Q649", "Moscow", None, ["Moskva"], "Q159", 30, (55.7505, 37.6175), "524901", "Q159"),
    ("Q656", "Saint Petersburg", "second-largest city of Russia, on the Baltic Sea",
     ["St. Petersburg", "Leningrad", "Petrograd"], "Q159", 28, None, None, "Q159"),
    ("Q1899", "Kyiv", None, ["Kiev"], "Q212", 26, None, None, None),
    ("Q1754", "Stockholm", None, [], "Q34", 27, None, None, None),
    ("Q585", "Oslo", None, ["Christiania"], "Q20", 26, None, None, None),
    ("Q1757", "Helsinki", None, ["Helsingfors"], "Q33", 26, None, None, None),
    ("Q1748", "Copenhagen", None, ["København"], "Q35", 26, None, None, None),
    ("Q1761", "Dublin", None, ["Baile Átha Cliath"], "Q27", 26, None, None, None),
    ("Q1435", "Zagreb", None, [], "Q224", 23, None, None, None),
    ("Q61", "Washington, D.C.", None, ["Washington", "D.C.", "District of Columbia"], "Q30", 29,
     (38.8951, -77.0364), None, "Q30"),
    ("Q60", "New York City", "most populous city of the United States",
     ["NYC", "New York", "Big Apple"], "Q30", 30, None, "5128581", None),
    ("Q1345", "Philadelphia", "largest city of the US state of Pennsylvania", ["Philly"], "Q30", 26, None,
     None, None),
    ("Q1930", "Ottawa", None, [], "Q16", 25, (45.4209, -75.6901), None, None),
    ("Q1489", "Mexico City", None, ["Ciudad de México", "CDMX"], "Q96", 27, None, None, "Q96"),
    ("Q2844", "Brasília", None, ["Brasilia"], "Q155", 25, (-15.7939, -47.8828), None, None),
    ("Q8678", "Rio de Janeiro", "coastal city in south-eastern Brazil", ["Rio"], "Q155", 28, None, None,
     None),
    ("Q174", "São Paulo", "largest city of Brazil", ["Sao Paulo"], "Q155", 27, None, None, None),
    ("Q1486", "Buenos Aires", None, [], "Q414", 27, None, None, "Q414"),
    ("Q2887", "Santiago", None, ["Santiago de Chile"], "Q298", 25, None, None, None),
    ("Q2841", "Bogotá", None, ["Bogota"], "Q739", 25, None, None, None),
    ("Q2868", "Lima", None, [], "Q419", 25, None, None, None),
    ("Q956", "Beijing", None, ["Peking"], "Q148", 29, None, None, "Q148"),
    ("Q1490", "Tokyo", None, ["Tōkyō", "Edo"], "Q17", 30, (35.6769, 139.7639), "1850147", None),
    ("Q987", "New Delhi", None, [], "Q668", 26, None, None, None),
    ("Q1362", "Islamabad", None, [], "Q843", 24, (33.6938, 73.0651), None, None),
    ("Q8660", "Karachi", "largest city of Pakistan, on the Arabian Sea", [], "Q843", 24, None, None, None),
    ("Q3630", "Jakarta", None, [], "Q252", 25, None, None, None),
    ("Q8684", "Seoul", None, [], "Q884", 27, None, None, None),
    ("Q18808", "Pyongyang", None, [], "Q423", 23, None, None, None),
    ("Q1858", "Hanoi", None, ["Ha Noi"], "Q881", 24, None, None, None),
    ("Q1861", "Bangkok", None, ["Krung Thep"], "Q869", 26, None, None, None),
    ("Q37400", "Naypyidaw", None, ["Nay Pyi Taw", "Naypyitaw"], "Q836", 18, (19.7753, 96.1033), None,
     None),
    ("Q37995", "Yangon", "largest city of Myanmar", ["Rangoon"], "Q836", 22, None, None, None),
    ("Q1865", "Kuala Lumpur", None, ["KL"], "Q833", 24, None, None, None),
    ("Q1520", "Astana", None, ["Nur-Sultan", "Akmola", "Tselinograd"], "Q232", 21, (51.1282, 71.4307), None,
     None),
    ("Q35493", "Almaty", "largest city of Kazakhstan", ["Alma-Ata"], "Q232", 21, None, None, None),
    ("Q3616", "Tehran", None, ["Teheran"], "Q794", 25, None, None, None),
    ("Q3692", "Riyadh", None, [], "Q851", 23, None, None, None),
    ("Q85", "Cairo", None, [], "Q79", 28, None, None, None),
    ("Q3787", "Abuja", None, [], "Q1033", 20, (9.0643, 7.4893), None, None),
    ("Q8673", "Lagos", "largest city of Nigeria, on the Atlantic coast", [], "Q1033", 23, None, None, None),
    ("Q3870", "Nairobi", None, [], "Q114", 23, (-1.289, 36.8173), None, None),
    ("Q3866", "Dodoma", None, [], "Q924", 16, None, None, None),
    ("Q1960", "Dar es Salaam", "largest city of Tanzania, on the Indian Ocean", [], "Q924", 20, None, None,
     None),
    ("Q3926", "Pretoria", "administrative capital of South Africa", ["Tshwane"], "Q258", 22, None, None, None),
    ("Q5465", "Cape Town", "legislative capital of South Africa, on the Atlantic coast", [], "Q258", 25, None, None, None),
    ("Q34647", "Johannesburg", "largest city of South Africa", ["Jo'burg", "Joburg", "Jozi"], "Q258", 24,
     None, None, None),
    ("Q3551", "Rabat", None, [], "Q1028", 21, None, None, None),
    ("Q3768", "Yamoussoukro", None, [], "Q1008", 15, None, None, None),
    ("Q1515", "Abidjan", "largest city of Côte d'Ivoire", [], "Q1008", 18, None, None, None),
    ("Q3114", "Canberra", None, [], "Q408", 24, (-35.2976, 149.1013), None, None),
    ("Q3141", "Melbourne", "coastal city in south-eastern Australia", [], "Q408", 26, None, None, None),
    ("Q3130", "Sydney", "largest city of Australia", [], "Q408", 28, None, None, None),
    ("Q23661", "Wellington", None, [], "Q664", 22, (-41.2888, 174.7772), None, None),
    ("Q37100", "Auckland", "largest city of New Zealand", [], "Q664", 22, None, None, None),
    # birth and death places of people below
    ("Q1055", "Hamburg", "port city in northern Germany", [], "Q183", 27, None, None, "Q183"),
    ("Q1794", "Frankfurt am Main", "city in Hesse, Germany", ["Frankfurt"], "Q183", 26, None, None, None),
    ("Q365", "Cologne", "city on the Rhine in Germany", ["Köln"], "Q183", 26, None, None, None),
    ("Q3012", "Ulm", "city on the Danube in Baden-Württemberg, Germany", [], "Q183", 20, None, None, None),
    ("Q2079", "Leipzig", "city in Saxony, Germany", [], "Q183", 24, None, None, None),
    ("Q34713", "Salzburg", "city in western Austria", [], "Q40", 24, None, None, None),
    ("Q8851", "Málaga", "city in Andalusia, Spain", ["Malaga"], "Q29", 22, None, None, None),
    ("Q2044", "Florence", "city in Tuscany, Italy", ["Firenze"], "Q38", 27, None, None, None),
    ("Q65", "Los Angeles", "city in California, United States", ["LA", "L.A."], "Q30", 28, None, None,
     None),
    ("Q62", "San Francisco", "city in northern California, United States", ["SF", "Frisco"], "Q30", 26,
     None, None, None),
    ("Q1297", "Chicago", "city in Illinois, United States", ["Windy City"], "Q30", 27, None, None, None),
    ("Q18094", "Honolulu", "capital of the US state of Hawaii", [], "Q30", 20, None, None, None),
    ("Q16557", "Dallas", "city in Texas, United States", [], "Q30", 22, None, None, None),
    ("Q34217", "Oxford", "university city in England", [], "Q145", 24, None, None, None),
    ("Q350", "Cambridge", "university city in England", [], "Q145", 24, None, None, None),
]

# capital statements: country -> [(city, start, end, rank)]
CAPITALS = {
    "Q183": [("Q586", "1949", "1990-10-03", "normal"), ("Q64", "1990-10-03", None, "preferred")],
    "Q155": [("Q8678", None, "1960-04-21", "normal"), ("Q2844", "1960-04-21", None, "preferred")],
    "Q1033": [("Q8673", None, "1991-12-12", "normal"), ("Q3787", "1991-12-12", None, "preferred")],
    "Q232": [("Q35493", None, "1997-12-10", "normal"), ("Q1520", "1997-12-10", None, "preferred")],
    "Q843": [("Q8660", "1947", "1959", "normal"), ("Q1362", None, None, "preferred")],
    "Q836": [("Q37995", None, "2005-11-06", "normal"), ("Q37400", "2005-11-06", None, "preferred")],
    "Q43": [("Q406", None, "1923-10-13", "normal"), ("Q3640", "1923-10-13", None, "preferred")],
    "Q159": [("Q656", None, "1918-03-12", "normal"), ("Q649", "1918-03-12", None, "preferred")],
    "Q408": [("Q3141", "1901", "1927", "normal"), ("Q3114", "1927", None, "preferred"),
             ("Q3130", None, None, "deprecated")],
    "Q924": [("Q1960", None, "1996", "normal"), ("Q3866", "1996", None, "preferred")],
    "Q1008": [("Q1515", None, "1983", "normal"), ("Q3768", "1983", None, "preferred")],
    "Q30": [("Q60", "1785", "1790", "normal"), ("Q1345", "1790", "1800", "normal"),
            ("Q61", "1800", None, "preferred")],
    "Q664": [("Q37100", "1841", "1865", "normal"), ("Q23661", "1865", None, "preferred")],
    "Q258": [("Q3926", None, None, "normal"), ("Q5465", None, None, "normal")],
    "Q142": [("Q90", None, None, "normal")], "Q145": [("Q84", None, None, "normal")],
    "Q38": [("Q220", None, None, "normal")], "Q29": [("Q2807", None, None, "normal")],
    "Q45": [("Q597", None, None, "normal")], "Q55": [("Q727", None, None, "normal")],
    "Q31": [("Q239", None, None, "normal")], "Q32": [("Q1842", None, None, "normal")],
    "Q39": [("Q70", None, None, "normal")], "Q40": [("Q1741", None, None, "normal")],
    "Q36": [("Q270", None, None, "normal")], "Q213": [("Q1085", None, None, "normal")],
    "Q28": [("Q1781", None, None, "normal")], "Q41": [("Q1524", None, None, "normal")],
    "Q212": [("Q1899", None, None, "normal")], "Q34": [("Q1754", None, None, "normal")],
    "Q20": [("Q585", None, None, "normal")], "Q33": [("Q1757", None, None, "normal")],
    "Q35": [("Q1748", None, None, "normal")], "Q27": [("Q1761", None, None, "normal")],
    "Q224": [("Q1435", None, None, "normal")], "Q16": [("Q1930", None, None, "normal")],
    "Q96": [("Q1489", None, None, "normal")], "Q414": [("Q1486", None, None, "normal")],
    "Q298": [("Q2887", None, None, "normal")], "Q739": [("Q2841", None, None, "normal")],
    "Q419": [("Q2868", None, None, "normal")], "Q148": [("Q956", None, None, "normal")],
    "Q17": [("Q1490", None, None, "normal")], "Q668": [("Q987", None, None, "normal")],
    "Q252": [("Q3630", None, None, "normal")], "Q884": [("Q8684", None, None, "normal")],
    "Q423": [("Q18808", None, None, "normal")], "Q881": [("Q1858", None, None, "normal")],
    "Q869": [("Q1861", None, None, "normal")], "Q833": [("Q1865", None, None, "normal")],
    "Q334": [("Q334", None, None, "normal")], "Q794": [("Q3616", None, None, "normal")],
    "Q851": [("Q3692", None, None, "normal")], "Q79": [("Q85", None, None, "normal")],
    "Q114": [("Q3870", None, None, "normal")], "Q1028": [("Q3551", None, None, "normal")],
}

# heads of state (P35) and of government (P6): country -> [(person, start, end, rank)]
HEADS_OF_STATE = {
    "Q30": [("Q23", "1789-04-30", "1797-03-04"), ("Q91", "1861-03-04", "1865-04-15"),
            ("Q8007", "1933-03-04", "1945-04-12"), ("Q9696", "1961-01-20", "1963-11-22"),
            ("Q76", "2009-01-20", "2017-01-20"), ("Q22686", "2017-01-20", "2021-01-20"),
            ("Q6279", "2021-01-20", "2025-01-20"), ("Q22686", "2025-01-20", None)],
    "Q145": [("Q9682", "1952-02-06", "2022-09-08"), ("Q43274", "2022-09-08", None)],
    "Q142": [("Q2042", "1959-01-08", "1969-04-28"), ("Q3052772", "2017-05-14", None)],
    "Q159": [("Q7747", "2000-05-07", "2008-05-07"), ("Q7747", "2012-05-07", None)],
    "Q148": [("Q5816", "1949-10-01", "1959-04-27"), ("Q15031", "2013-03-14", None)],
    "Q258": [("Q8023", "1994-05-10", "1999-06-14")],
}
HEADS_OF_GOVERNMENT = {
    "Q183": [("Q2492", "1949-09-15", "1963-10-16"), ("Q2530", "1998-10-27", "2005-11-22"),
             ("Q567", "2005-11-22", "2021-12-08"), ("Q61053", "2021-12-08", "2025-05-06"),
             ("Q566257", "2025-05-06", None)],
    "Q145": [("Q8016", "1940-05-10", "1945-07-26"), ("Q8016", "1951-10-26", "1955-04-05"),
             ("Q7416", "1979-05-04", "1990-11-28")],
    "Q668": [("Q1047", "1947-08-15", "1964-05-27"), ("Q1058", "2014-05-26", None)],
}
# which office each head-of-state/government list corresponds to (for P39 on the people)
OFFICE_OF = {("P35", "Q30"): "Q11696", ("P35", "Q142"): "Q191954", ("P35", "Q159"): "Q218295",
             ("P6", "Q183"): "Q4970706", ("P6", "Q145"): "Q14211", ("P6", "Q668"): "Q192711"}

# --------------------------------------------------------------------------
# people
# id: (label, description, aliases, fame, sex, birth, death, birthplace,
#      deathplace, citizenships [(country, since)], occupations, extra claims)
# birth/death: "YYYY", "YYYY-MM" or "YYYY-MM-DD"; SOME for unknown value
# --------------------------------------------------------------------------
M, F = "Q6581097", "Q6581072"
PEOPLE = [
    ("Q937", "Albert Einstein", "German-born theoretical physicist who developed relativity",
     ["Einstein", "A. Einstein"], 30, M, "1879-03-14", "1955-04-18", "Q3012", None,
     [("Q39", "1901"), ("Q30", "1940")], ["Q169470"],
     {"P166": [("Q38104", {"P585": "1921"})], "P1412": ["Q188", "Q1860"], "P103": ["Q188"],
      "P214": ["75121530"], "P227": ["118529579"]}),
    ("Q7186", "Marie Curie", "Polish-born French physicist and chemist, pioneer of radioactivity research",
     ["Maria Skłodowska-Curie", "Marie Skłodowska Curie", "Madame Curie"], 28, F, "1867-11-07",
     "1934-07-04", "Q270", None, [("Q142", None)], ["Q169470", "Q593644"],
     {"P26": [("Q37463", {"P580": "1895-07-26", "P582": "1906-04-19"})],
      "P166": [("Q38104", {"P585": "1903"}), ("Q44585", {"P585": "1911"})],
      "P1412": ["Q809", "Q150"], "P103": ["Q809"]}),
    ("Q37463", "Pierre Curie", "French physicist, co-discoverer of polonium and radium", [], 18, M,
     "1859-05-15", "1906-04-19", "Q90", "Q90", [("Q142", None)], ["Q169470"],
     {"P26": [("Q7186", {"P580": "1895-07-26", "P582": "1906-04-19"})],
      "P166": [("Q38104", {"P585": "1903"})]}),
    ("Q935", "Isaac Newton", "English mathematician and physicist who formulated the laws of motion",
     ["Sir Isaac Newton", "Newton"], 30, M, "1643-01-04", "1727-03-31", None, None, [],
     ["Q169470", "Q170790", "Q11063"], {"P26": [NONE]}),
    ("Q1035", "Charles Darwin", "English naturalist known for the theory of evolution by natural selection",
     ["Charles Robert Darwin", "Darwin"], 28, M, "1809-02-12", "1882-04-19", None, None, [], ["Q864503"],
     {}),
    ("Q307", "Galileo Galilei", "Italian astronomer and physicist of the Scientific Revolution",
     ["Galileo"], 28, M, "1564", "1642-01-08", None, None, [], ["Q169470", "Q11063", "Q170790"], {}),
    ("Q692", "William Shakespeare", "English playwright and poet", ["Shakespeare", "the Bard",
     "Bard of Avon"], 30, M, "1564", "1616", None, None, [], ["Q214917", "Q49757"],
     {"P1412": ["Q1860"], "P214": ["96994048"]}),
    ("Q762", "Leonardo da Vinci", "Italian Renaissance painter, engineer and polymath",
     ["Leonardo", "da Vinci"], 30, M, "1452", "1519", None, None, [],
     ["Q1028181", "Q1281618", "Q42973", "Q81096"], {}),
    ("Q5598", "Rembrandt", "Dutch Golden Age painter and printmaker",
     ["Rembrandt van Rijn", "Rembrandt Harmenszoon van Rijn"], 24, M, "1606-07-15", "1669-10-04", None,
     "Q727", [], ["Q1028181"], {}),
    ("Q41264", "Johannes Vermeer", "Dutch painter of domestic interior scenes", ["Vermeer", "Jan Vermeer"],
     18, M, "1632", "1675", None, None, [], ["Q1028181"], {}),
    ("Q5582", "Vincent van Gogh", "Dutch post-impressionist painter", ["van Gogh"], 27, M, "1853-03-30",
     "1890-07-29", None, None, [("Q55", None)], ["Q1028181"], {}),
    ("Q5593", "Pablo Picasso", "Spanish painter and sculptor, co-founder of cubism", ["Picasso"], 27, M,
     "1881-10-25", "1973-04-08", "Q8851", None, [("Q29", None)], ["Q1028181", "Q1281618"], {}),
    ("Q5588", "Frida Kahlo", "Mexican painter known for her self-portraits", ["Frida"], 20, F,
     "1907-07-06", "1954-07-13", None, None, [("Q96", None)], ["Q1028181"], {}),
    ("Q254", "Wolfgang Amadeus Mozart", "Austrian composer of the Classical period", ["Mozart",
     "W. A. Mozart"], 29, M, "1756-01-27", "1791-12-05", "Q34713", "Q1741", [], ["Q36834", "Q639669"],
     {}),
    ("Q255", "Ludwig van Beethoven", "German composer and pianist", ["Beethoven"], 29, M, "1770",
     "1827-03-26", "Q586", "Q1741", [], ["Q36834", "Q639669"], {}),
    ("Q1339", "Johann Sebastian Bach", "German composer and organist of the Baroque era", ["J. S. Bach",
     "Bach"], 27, M, "1685", "1750-07-28", None, "Q2079", [], ["Q36834", "Q639669"], {}),
    ("Q5879", "Johann Wolfgang von Goethe", "German poet, playwright and novelist", ["Goethe"], 28, M,
     "1749-08-28", "1832-03-22", "Q1794", None, [], ["Q36180", "Q49757", "Q214917"],
     {"P1412": ["Q188"]}),
    ("Q9312", "Immanuel Kant", "German Enlightenment philosopher", ["Kant"], 26, M, "1724-04-22",
     "1804-02-12", None, None, [], ["Q4964182"], {}),
    ("Q9061", "Karl Marx", "German philosopher and economist, co-author of The Communist Manifesto",
     ["Marx"], 28, M, "1818-05-05", "1883-03-14", None, "Q84", [], ["Q4964182", "Q188094", "Q1930187"], {}),
    ("Q535", "Victor Hugo", "French novelist, poet and playwright", ["Hugo"], 26, M, "1802-02-26",
     "1885-05-22", None, "Q90", [("Q142", None)], ["Q6625963", "Q49757", "Q214917", "Q82955"], {}),
    ("Q517", "Napoleon", "French military leader and emperor of the French",
     ["Napoleon Bonaparte", "Napoleon I", "Napoléon Bonaparte"], 30, M, "1769-08-15", "1821-05-05", None,
     None, [("Q142", None)], ["Q82955", "Q189290"], {}),
    ("Q5686", "Charles Dickens", "English novelist of the Victorian era", ["Dickens", "Boz"], 26, M,
     "1812-02-07", "1870-06-09", None, None, [], ["Q6625963"], {}),
    ("Q36322", "Jane Austen", "English novelist of the Regency era", ["Austen"], 24, F, "1775-12-16",
     "1817-07-18", None, None, [], ["Q6625963"], {"P26": [NONE]}),
    ("Q7245", "Mark Twain", "American writer and humorist", ["Samuel Clemens", "Samuel Langhorne Clemens"],
     25, M, "1835-11-30", "1910-04-21", None, None, [("Q30", None)], ["Q6625963", "Q1930187"], {}),
    ("Q7243", "Leo Tolstoy", "Russian novelist", ["Lev Tolstoy", "Count Leo Tolstoy"], 27, M, "1828",
     "1910", None, None, [], ["Q6625963"], {}),
    ("Q991", "Fyodor Dostoevsky", "Russian novelist", ["Dostoyevsky", "Fyodor Dostoyevsky"], 26, M, "1821",
     "1881", "Q649", "Q656", [], ["Q6625963"], {}),
    ("Q5682", "Miguel de Cervantes", "Spanish novelist and playwright", ["Cervantes"], 26, M, "1547",
     "1616-04-22", None, "Q2807", [], ["Q6625963", "Q214917"], {}),
    ("Q905", "Franz Kafka", "Prague-born novelist and short-story writer writing in German", ["Kafka"], 25,
     M, "1883-07-03", "1924-06-03", "Q1085", None, [], ["Q6625963"], {"P1412": ["Q188"]}),
    ("Q3335", "George Orwell", "English novelist and essayist", ["Eric Arthur Blair", "Eric Blair"], 25, M,
     "1903-06-25", "1950-01-21", None, "Q84", [("Q145", None)], ["Q6625963", "Q1930187"], {}),
    ("Q23434", "Ernest Hemingway", "American novelist and journalist", ["Hemingway", "Papa Hemingway"], 25,
     M, "1899-07-21", "1961-07-02", None, None, [("Q30", None)], ["Q6625963", "Q1930187"],
     {"P166": [("Q37922", {"P585": "1954"})]}),
    ("Q5878", "Gabriel García Márquez", "Colombian novelist and journalist",
     ["Gabo", "Gabriel Garcia Marquez"], 24, M, "1927-03-06", "2014-04-17", None, "Q1489",
     [("Q739", None)], ["Q6625963", "Q1930187"], {"P166": [("Q37922", {"P585": "1982"})]}),
    ("Q892", "J. R. R. Tolkien", "English writer and philologist, author of The Lord of the Rings",
     ["Tolkien", "John Ronald Reuel Tolkien"], 25, M, "1892-01-03", "1973-09-02", None, None,
     [("Q145", None)], ["Q36180", "Q1622272"], {}),
    ("Q34660", "J. K. Rowling", "British author of the Harry Potter novels",
     ["Joanne Rowling", "Robert Galbraith", "JK Rowling"], 24, F, "1965-07-31", None, None, None,
     [("Q145", None)], ["Q6625963"], {}),
    ("Q42", "Douglas Adams", "English writer of comic science fiction",
     ["Douglas Noël Adams", "Douglas Noel Adams"], 20, M, "1952-03-11", "2001-05-11", "Q350", None,
     [("Q145", None)], ["Q6625963"], {}),
    ("Q5679", "Lord Byron", "English Romantic poet", ["George Gordon Byron", "Byron"], 20, M, "1788-01-22",
     "1824-04-19", "Q84", None, [], ["Q49757"], {}),
    ("Q7259", "Ada Lovelace", "English mathematician known for her work on the Analytical Engine",
     ["Augusta Ada King", "Countess of Lovelace", "Ada King"], 18, F, "1815-12-10", "1852-11-27", "Q84",
     "Q84", [], ["Q170790"], {"P22": ["Q5679"]}),
    ("Q7251", "Alan Turing", "English mathematician and pioneer of computer science",
     ["Alan Mathison Turing", "Turing"], 24, M, "1912-06-23", "1954-06-07", "Q84", None, [("Q145", None)],
     ["Q170790", "Q82594"], {}),
    ("Q17714", "Stephen Hawking", "English theoretical physicist and cosmologist", ["Hawking"], 24, M,
     "1942-01-08", "2018-03-14", "Q34217", "Q350", [("Q145", None)], ["Q169470", "Q1622272"], {}),
    ("Q9036", "Nikola Tesla", "Serbian-American inventor and electrical engineer", ["Tesla"], 24, M,
     "1856-07-10", "1943-01-07", None, "Q60", [("Q30", "1891")], ["Q205375", "Q81096"],
     {"P26": [NONE]}),
    ("Q9215", "Sigmund Freud", "Austrian neurologist, founder of psychoanalysis", ["Freud"], 25, M,
     "1856-05-06", "1939-09-23", None, "Q84", [], ["Q39631"], {}),
    ("Q6691", "Homer", "ancient Greek epic poet to whom the Iliad and Odyssey are attributed", [], 25, M,
     SOME, SOME, SOME, None, [], ["Q49757"], {}),
    ("Q1001", "Mahatma Gandhi", "Indian lawyer and leader of the Indian independence movement",
     ["Mohandas Karamchand Gandhi", "Gandhi", "Bapu"], 28, M, "1869-10-02", "1948-01-30", None, "Q987", [],
     ["Q40348", "Q82955"], {}),
    ("Q1047", "Jawaharlal Nehru", "first Prime Minister of India", ["Nehru", "Pandit Nehru"], 22, M,
     "1889-11-14", "1964-05-27", None, "Q987", [("Q668", None)], ["Q82955", "Q40348"], {}),
    ("Q1058", "Narendra Modi", "Indian politician, Prime Minister of India since 2014", ["Modi"], 22, M,
     "1950-09-17", None, None, None, [("Q668", None)], ["Q82955"], {}),
    ("Q8023", "Nelson Mandela", "South African anti-apartheid leader and president",
     ["Madiba", "Nelson Rolihlahla Mandela"], 28, M, "1918-07-18", "2013-12-05", None, "Q34647",
     [("Q258", None)], ["Q82955", "Q40348"], {"P166": [("Q35637", {"P585": "1993"})]}),
    ("Q5816", "Mao Zedong", "Chinese communist revolutionary, founder of the People's Republic of China",
     ["Mao Tse-tung", "Chairman Mao"], 26, M, "1893-12-26", "1976-09-09", None, "Q956", [("Q148", None)],
     ["Q82955"], {}),
    ("Q15031", "Xi Jinping", "Chinese politician, President of the People's Republic of China", ["Xi"], 22,
     M, "1953-06-15", None, "Q956", None, [("Q148", None)], ["Q82955"], {}),
    ("Q23", "George Washington", "first President of the United States", ["Washington"], 27, M,
     "1732-02-22", "1799-12-14", None, None, [("Q30", None)], ["Q82955", "Q189290"], {}),
    ("Q91", "Abraham Lincoln", "16th President of the United States", ["Lincoln", "Honest Abe"], 28, M,
     "1809-02-12", "1865-04-15", None, "Q61", [("Q30", None)], ["Q82955", "Q40348"], {}),
    ("Q8007", "Franklin D. Roosevelt", "32nd President of the United States",
     ["FDR", "Franklin Delano Roosevelt"], 24, M, "1882-01-30", "1945-04-12", None, None, [("Q30", None)],
     ["Q82955", "Q40348"], {}),
    ("Q9696", "John F. Kennedy", "35th President of the United States",
     ["JFK", "John Fitzgerald Kennedy", "Jack Kennedy"], 26, M, "1917-05-29", "1963-11-22", None, "Q16557",
     [("Q30", None)], ["Q82955"], {}),
    ("Q76", "Barack Obama", "44th President of the United States", ["Barack Hussein Obama II", "Obama"],
     29, M, "1961-08-04", None, "Q18094", None, [("Q30", None)], ["Q82955", "Q40348"],
     {"P26": [("Q13133", {"P580": "1992-10-03"})], "P166": [("Q35637", {"P585": "2009"})]}),
    ("Q13133", "Michelle Obama", "American lawyer, First Lady of the United States from 2009 to 2017",
     ["Michelle LaVaughn Robinson Obama", "Michelle Robinson"], 20, F, "1964-01-17", None, "Q1297", None,
     [("Q30", None)], ["Q40348"], {"P26": [("Q76", {"P580": "1992-10-03"})]}),
    ("Q22686", "Donald Trump", "45th and 47th President of the United States",
     ["Donald John Trump", "Trump"], 28, M, "1946-06-14", None, "Q60", None, [("Q30", None)],
     ["Q82955", "Q43845"], {}),
    ("Q6279", "Joe Biden", "46th President of the United States",
     ["Joseph Robinette Biden Jr.", "Biden"], 25, M, "1942-11-20", None, None, None, [("Q30", None)],
     ["Q82955", "Q40348"], {}),
    ("Q8016", "Winston Churchill", "British statesman, Prime Minister during the Second World War",
     ["Sir Winston Churchill", "Winston Leonard Spencer Churchill", "Churchill"], 28, M, "1874-11-30",
     "1965-01-24", None, "Q84", [("Q145", None)], ["Q82955", "Q36180"],
     {"P166": [("Q37922", {"P585": "1953"})]}),
    ("Q7416", "Margaret Thatcher", "British Prime Minister from 1979 to 1990",
     ["Thatcher", "Iron Lady", "Baroness Thatcher"], 24, F, "1925-10-13", "2013-04-08", None, "Q84",
     [("Q145", None)], ["Q82955", "Q593644"], {}),
    ("Q9682", "Elizabeth II", "Queen of the United Kingdom from 1952 to 2022",
     ["Queen Elizabeth II", "Elizabeth Alexandra Mary"], 28, F, "1926-04-21", "2022-09-08", "Q84", None,
     [("Q145", None)], ["Q116"], {}),
    ("Q43274", "Charles III", "King of the United Kingdom since 2022",
     ["King Charles III", "Prince Charles", "Charles, Prince of Wales"], 24, M, "1948-11-14", None, "Q84",
     None, [("Q145", None)], ["Q116"], {}),
    ("Q567", "Angela Merkel", "German politician, Chancellor of Germany from 2005 to 2021",
     ["Angela Dorothea Merkel", "Merkel", "Angela Dorothea Kasner"], 28, F, "1954-07-17", None, "Q1055",
     None, [("Q183", None)], ["Q82955", "Q169470"],
     {"P1412": ["Q188", "Q7737", "Q1860"], "P103": ["Q188"]}),
    ("Q2492", "Konrad Adenauer", "first Chancellor of the Federal Republic of Germany", ["Adenauer"], 22, M,
     "1876-01-05", "1967-04-19", "Q365", None, [("Q183", None)], ["Q82955", "Q40348"], {}),
    ("Q2530", "Gerhard Schröder", "German politician, Chancellor of Germany from 1998 to 2005",
     ["Schröder", "Gerhard Schroeder"], 20, M, "1944-04-07", None, None, None, [("Q183", None)],
     ["Q82955", "Q40348"], {}),
    ("Q61053", "Olaf Scholz", "German politician, Chancellor of Germany from 2021 to 2025", ["Scholz"], 20,
     M, "1958-06-14", None, None, None, [("Q183", None)], ["Q82955", "Q40348"], {}),
    ("Q566257", "Friedrich Merz", "German politician, Chancellor of Germany since 2025", ["Merz"], 16, M,
     "1955-11-11", None, None, None, [("Q183", None)], ["Q82955", "Q40348"], {}),
    ("Q3052772", "Emmanuel Macron", "French politician, President of France since 2017", ["Macron"], 24, M,
     "1977-12-21", None, None, None, [("Q142", None)], ["Q82955"], {"P1412": ["Q150", "Q1860"]}),
    ("Q2042", "Charles de Gaulle", "French general and statesman, founder of the Fifth Republic",
     ["de Gaulle", "General de Gaulle"], 25, M, "1890-11-22", "1970-11-09", None, None, [("Q142", None)],
     ["Q82955", "Q189290"], {}),
    ("Q7747", "Vladimir Putin", "Russian politician, President of Russia", ["Putin",
     "Vladimir Vladimirovich Putin"], 28, M, "1952-10-07", None, "Q656", None, [("Q159", None)],
     ["Q82955"], {"P1412": ["Q7737", "Q188"], "P103": ["Q7737"]}),
    ("Q882", "Charlie Chaplin", "English comic actor and filmmaker of the silent era",
     ["Charles Chaplin", "Charles Spencer Chaplin", "The Tramp"], 25, M, "1889-04-16", "1977-12-25", "Q84",
     None, [("Q145", None)], ["Q33999", "Q2526255", "Q36834"], {}),
    ("Q7374", "Alfred Hitchcock", "English film director known as the master of suspense", ["Hitchcock",
     "Hitch"], 23, M, "1899-08-13", "1980-04-29", "Q84", "Q65", [("Q145", None), ("Q30", "1955")],
     ["Q2526255", "Q3282637"], {}),
    ("Q2001", "Stanley Kubrick", "American film director", ["Kubrick"], 22, M, "1928-07-26", "1999-03-07",
     "Q60", None, [("Q30", None)], ["Q2526255"], {}),
    ("Q8877", "Steven Spielberg", "American film director and producer", ["Spielberg"], 24, M,
     "1946-12-18", None, None, None, [("Q30", None)], ["Q2526255", "Q3282637"], {}),
    ("Q8006", "Akira Kurosawa", "Japanese film director", ["Kurosawa"], 21, M, "1910-03-23", "1998-09-06",
     "Q1490", "Q1490", [("Q17", None)], ["Q2526255"], {}),
    ("Q56094", "Francis Ford Coppola", "American film director and producer", ["Coppola"], 20, M,
     "1939-04-07", None, None, None, [("Q30", None)], ["Q2526255", "Q3282637"], {}),
    ("Q25191", "Christopher Nolan", "British-American film director", ["Nolan"], 21, M, "1970-07-30", None,
     "Q84", None, [("Q145", None)], ["Q2526255"], {}),
    ("Q55400", "Hayao Miyazaki", "Japanese animator and film director, co-founder of Studio Ghibli",
     ["Miyazaki"], 20, M, "1941-01-05", None, "Q1490", None, [("Q17", None)], ["Q2526255"], {}),
    ("Q615", "Lionel Messi", "Argentine footballer", ["Leo Messi", "Messi"], 24, M, "1987-06-24", None,
     None, None, [("Q414", None)], ["Q937857"], {}),
    ("Q12897", "Pelé", "Brazilian footballer", ["Edson Arantes do Nascimento", "Pele"], 23, M, "1940-10-23",
     "2022-12-29", None, "Q174", [("Q155", None)], ["Q937857"], {}),
    ("Q19837", "Steve Jobs", "American entrepreneur, co-founder of Apple", ["Steven Paul Jobs", "Jobs"], 24,
     M, "1955-02-24", "2011-10-05", "Q62", None, [("Q30", None)], ["Q43845", "Q131524"], {}),
    ("Q317521", "Elon Musk", "South African-born businessman, head of Tesla and SpaceX",
     ["Elon Reeve Musk", "Musk"], 22, M, "1971-06-28", None, "Q3926", None,
     [("Q258", None), ("Q16", None), ("Q30", "2002")], ["Q43845", "Q131524"], {}),
    ("Q32732", "Malala Yousafzai", "Pakistani activist for girls' education, Nobel Peace Prize laureate",
     ["Malala"], 20, F, "1997-07-12", None, None, None, [("Q843", None)], [],
     {"P166": [("Q35637", {"P585": "2014"})]}),
]

# extra P166 on Planck-free Einstein etc. is handled above; Frida Kahlo also gets a deprecated birth date
DEPRECATED_BIRTHS = {"Q5588": "1910-07-07"}

# --------------------------------------------------------------------------
# works
# id, label, description, aliases, fame, class, creator property, creator,
# date property, date, language property, languages, countries of origin
# --------------------------------------------------------------------------
WORKS = [
    ("Q170583", "Pride and Prejudice", "1813 novel by Jane Austen", [], 24, "Q8261", "P50", "Q36322",
     "P577", "1813", "P407", ["Q1860"], []),
    ("Q274744", "Sense and Sensibility", "1811 novel by Jane Austen", [], 18, "Q8261", "P50", "Q36322",
     "P577", "1811", "P407", ["Q1860"], []),
    ("Q164974", "Oliver Twist", "novel by Charles Dickens", [], 20, "Q8261", "P50", "Q5686", "P577", "1838",
     "P407", ["Q1860"], []),
    ("Q219552", "Great Expectations", "novel by Charles Dickens", [], 18, "Q8261", "P50", "Q5686", "P577",
     "1861", "P407", ["Q1860"], []),
    ("Q215410", "Adventures of Huckleberry Finn", "novel by Mark Twain",
     ["Huckleberry Finn", "The Adventures of Huckleberry Finn"], 18, "Q8261", "P50", "Q7245", "P577", "1884",
     "P407", ["Q1860"], ["Q30"]),
    ("Q326914", "The Adventures of Tom Sawyer", "novel by Mark Twain", ["Tom Sawyer"], 18, "Q8261", "P50",
     "Q7245", "P577", "1876", "P407", ["Q1860"], ["Q30"]),
    ("Q161531", "War and Peace", "novel by Leo Tolstoy", [], 24, "Q8261", "P50", "Q7243", "P577", "1869",
     "P407", ["Q7737"], []),
    ("Q147787", "Anna Karenina", "novel by Leo Tolstoy", [], 22, "Q8261", "P50", "Q7243", "P577", "1878",
     "P407", ["Q7737"], []),
    ("Q165318", "Crime and Punishment", "novel by Fyodor Dostoevsky", [], 22, "Q8261", "P50", "Q991",
     "P577", "1866", "P407", ["Q7737"], []),
    ("Q183157", "The Brothers Karamazov", "last novel by Fyodor Dostoevsky", [], 18, "Q8261", "P50", "Q991",
     "P577", "1880", "P407", ["Q7737"], []),
    ("Q480", "Don Quixote", "novel by Miguel de Cervantes",
     ["The Ingenious Gentleman Don Quixote of La Mancha", "Don Quijote"], 26, "Q8261", "P50", "Q5682",
     "P577", "1605-01", "P407", ["Q1321"], ["Q29"]),
    ("Q180736", "Les Misérables", "novel by Victor Hugo", ["Les Miserables"], 22, "Q8261", "P50", "Q535",
     "P577", "1862", "P407", ["Q150"], ["Q142"]),
    ("Q191380", "The Hunchback of Notre-Dame", "novel by Victor Hugo", ["Notre-Dame de Paris"], 20, "Q8261",
     "P50", "Q535", "P577", "1831", "P407", ["Q150"], ["Q142"]),
    ("Q36097", "The Trial", "novel by Franz Kafka, published after his death", ["Der Process"], 20,
     "Q8261", "P50", "Q905", "P577", "1925", "P407", ["Q188"], []),
    ("Q208460", "Nineteen Eighty-Four", "dystopian novel by George Orwell", ["1984"], 26, "Q8261", "P50",
     "Q3335", "P577", "1949-06-08", "P407", ["Q1860"], ["Q145"]),
    ("Q1396889", "Animal Farm", "allegorical novella by George Orwell", [], 24, "Q7725634", "P50", "Q3335",
     "P577", "1945-08", "P407", ["Q1860"], ["Q145"]),
    ("Q26505", "The Old Man and the Sea", "novella by Ernest Hemingway", [], 22, "Q7725634", "P50",
     "Q23434", "P577", "1952", "P407", ["Q1860"], ["Q30"]),
    ("Q74287", "The Hobbit", "fantasy novel by J. R. R. Tolkien", ["The Hobbit, or There and Back Again"],
     24, "Q8261", "P50", "Q892", "P577", "1937-09-21", "P407", ["Q1860"], ["Q145"]),
    ("Q208002", "The Fellowship of the Ring", "first volume of The Lord of the Rings by J. R. R. Tolkien",
     [], 18, "Q8261", "P50", "Q892", "P577", "1954-07-29", "P407", ["Q1860"], ["Q145"]),
    ("Q43361", "Harry Potter and the Philosopher's Stone", "first Harry Potter novel by J. K. Rowling",
     ["Harry Potter and the Sorcerer's Stone"], 25, "Q8261", "P50", "Q34660", "P577", "1997-06-26", "P407",
     ["Q1860"], ["Q145"]),
    ("Q47209", "Harry Potter and the Chamber of Secrets", "second Harry Potter novel by J. K. Rowling", [],
     22, "Q8261", "P50", "Q34660", "P577", "1998", "P407", ["Q1860"], ["Q145"]),
    ("Q46758", "Harry Potter and the Deathly Hallows", "seventh and final Harry Potter novel", [], 22,
     "Q8261", "P50", "Q34660", "P577", "2007-07-21", "P407", ["Q1860"], ["Q145"]),
    ("Q29478", "Faust", "tragic play in two parts by Johann Wolfgang von Goethe", [], 20, "Q7725634", "P50",
     "Q5879", "P577", "1808", "P407", ["Q188"], []),
    ("Q41567", "Hamlet", "tragedy by William Shakespeare",
     ["The Tragedy of Hamlet, Prince of Denmark"], 26, "Q7725634", "P50", "Q692", "P577", "1603", "P407",
     ["Q1860"], []),
    ("Q83186", "Romeo and Juliet", "tragedy by William Shakespeare", [], 26, "Q7725634", "P50", "Q692",
     "P577", "1597", "P407", ["Q1860"], []),
    ("Q8275", "Iliad", "ancient Greek epic poem attributed to Homer", ["The Iliad"], 26, "Q7725634", "P50",
     "Q6691", None, None, None, [], []),
    # paintings
    ("Q12418", "Mona Lisa", "portrait painting by Leonardo da Vinci", ["La Gioconda", "La Joconde"], 30,
     "Q3305213", "P170", "Q762", "P571", "1503", None, [], []),
    ("Q128910", "The Last Supper", "mural painting by Leonardo da Vinci in Milan", ["Il Cenacolo"], 24,
     "Q3305213", "P170", "Q762", None, None, None, [], []),
    ("Q45585", "The Starry Night", "painting by Vincent van Gogh", ["Starry Night"], 24, "Q3305213", "P170",
     "Q5582", "P571", "1889-06", None, [], []),
    ("Q175036", "Guernica", "anti-war painting by Pablo Picasso", [], 24, "Q3305213", "P170", "Q5593",
     "P571", "1937", None, [], []),
    ("Q219831", "The Night Watch", "group portrait by Rembrandt", ["Night Watch"], 20, "Q3305213", "P170",
     "Q5598", "P571", "1642", None, [], []),
    ("Q185372", "Girl with a Pearl Earring", "painting by Johannes Vermeer", [], 20, "Q3305213", "P170",
     "Q41264", "P571", "1665", None, [], []),
    # films
    ("Q47703", "The Godfather", "1972 crime film by Francis Ford Coppola", [], 24, "Q11424", "P57",
     "Q56094", "P577", "1972", "P364", ["Q1860"], ["Q30"]),
    ("Q483941", "Schindler's List", "1993 historical drama film by Steven Spielberg", [], 22, "Q11424", "P57",
     "Q8877", "P577", "1993", "P364", ["Q1860"], ["Q30"]),
    ("Q25188", "Inception", "2010 science fiction film by Christopher Nolan", [], 22, "Q11424", "P57",
     "Q25191", "P577", "2010", "P364", ["Q1860"], ["Q30", "Q145"]),
    ("Q163872", "The Dark Knight", "2008 superhero film by Christopher Nolan", [], 22, "Q11424", "P57",
     "Q25191", "P577", "2008", "P364", ["Q1860"], ["Q30", "Q145"]),
    ("Q103474", "2001: A Space Odyssey", "1968 science fiction film by Stanley Kubrick",
     ["2001 A Space Odyssey"], 22, "Q11424", "P57", "Q2001", "P577", "1968", "P364", ["Q1860"],
     ["Q30", "Q145"]),
    ("Q189540", "Seven Samurai", "1954 film by Akira Kurosawa", ["Shichinin no Samurai"], 20, "Q11424",
     "P57", "Q8006", "P577", "1954", "P364", ["Q5287"], ["Q17"]),
    ("Q135465", "Rashomon", "1950 film by Akira Kurosawa", ["Rashōmon"], 18, "Q11424", "P57", "Q8006",
     "P577", "1950", "P364", ["Q5287"], ["Q17"]),
    ("Q155653", "Spirited Away", "2001 animated film by Hayao Miyazaki", ["Sen to Chihiro no Kamikakushi"],
     22, "Q11424", "P57", "Q55400", "P577", "2001-07-20", "P364", ["Q5287"], ["Q17"]),
    ("Q163038", "Psycho", "1960 thriller film by Alfred Hitchcock", [], 20, "Q11424", "P57", "Q7374",
     "P577", "1960", "P364", ["Q1860"], ["Q30"]),
    ("Q202548", "Vertigo", "1958 thriller film by Alfred Hitchcock", [], 18, "Q11424", "P57", "Q7374",
     "P577", "1958", "P364", ["Q1860"], ["Q30"]),
    ("Q45602", "Modern Times", "1936 comedy film by Charlie Chaplin", [], 18, "Q11424", "P57", "Q882",
     "P577", "1936", None, [], ["Q30"]),
    ("Q109116", "The Great Dictator", "1940 satirical film by Charlie Chaplin", [], 18, "Q11424", "P57",
     "Q882", "P577", "1940", "P364", ["Q1860"], ["Q30"]),
]

# references attached to a few statements: (subject, property, value) -> reference snaks
REF_EN = [("P143", "Q328"), ("P813", "2025-06-01")]
REF_DE = [("P143", "Q48183"), ("P813", "2025-06-01")]


# ==========================================================================
# builder
# ==========================================================================
class Builder:
    def __init__(self) -> None:
        self.items: dict[str, dict] = {}
        self.fame: dict[str, int] = {}
        self.statement_keys: set[str] = set()

    # ---- entities --------------------------------------------------------
    def item(self, qid: str, label: str, description: str, aliases=(), fame: int = 5) -> dict:
        if qid in self.items:
            raise ValueError(f"duplicate entity {qid}")
        ent = {"type": "item", "id": qid,
               "labels": {"en": {"language": "en", "value": label}},
               "descriptions": {"en": {"language": "en", "value": description}},
               "aliases": {}, "claims": {}}
        if aliases:
            ent["aliases"]["en"] = [{"language": "en", "value": a} for a in aliases]
        for lang, (loc_label, loc_aliases) in LOCAL.get(qid, {}).items():
            ent["labels"][lang] = {"language": lang, "value": loc_label}
            if loc_aliases:
                ent["aliases"][lang] = [{"language": lang, "value": a} for a in loc_aliases]
        self.items[qid] = ent
        self.fame[qid] = max(1, min(30, fame))
        return ent

    # ---- values ----------------------------------------------------------
    @staticmethod
    def datavalue(datatype: str, value) -> dict:
        if datatype == "wikibase-item":
            return {"value": {"entity-type": "item", "numeric-id": int(value[1:]), "id": value},
                    "type": "wikibase-entityid"}
        if datatype == "time":
            parts = [int(p) for p in value.split("-")]
            year, month, day = (parts + [0, 0])[:3]
            precision = {1: 9, 2: 10, 3: 11}[len(parts)]
            return {"value": {"time": f"+{year:04d}-{month:02d}-{day:02d}T00:00:00Z", "timezone": 0,
                              "before": 0, "after": 0, "precision": precision, "calendarmodel": GREGORIAN},
                    "type": "time"}
        if datatype == "quantity":
            return {"value": {"amount": f"+{int(value)}", "unit": "1"}, "type": "quantity"}
        if datatype == "globe-coordinate":
            lat, lon, precision = value
            return {"value": {"latitude": lat, "longitude": lon, "altitude": None, "precision": precision,
                              "globe": EARTH}, "type": "globecoordinate"}
        if datatype == "monolingualtext":
            text, lang = value
            return {"value": {"text": text, "language": lang}, "type": "monolingualtext"}
        if datatype in ("string", "external-id"):
            return {"value": value, "type": "string"}
        raise ValueError(datatype)

    def snak(self, pid: str, value, with_hash: bool) -> dict:
        datatype = PROPERTIES[pid][0]
        if value in (SOME, NONE):
            snak = {"snaktype": "somevalue" if value == SOME else "novalue", "property": pid}
        else:
            snak = {"snaktype": "value", "property": pid, "datavalue": self.datavalue(datatype, value)}
        snak["datatype"] = datatype
        if with_hash:
            digest = hashlib.sha1(json.dumps(snak, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
            snak = {"snaktype": snak["snaktype"], "property": pid, "hash": digest,
                    **{k: v for k, v in snak.items() if k not in ("snaktype", "property")}}
        return snak

    # ---- statements ------------------------------------------------------
    def claim(self, subject: str, pid: str, value, rank: str = "normal", qualifiers=None,
              reference=None) -> None:
        qualifiers = [(p, v) for p, v in (qualifiers or {}).items() if v is not None] \
            if isinstance(qualifiers, dict) else list(qualifiers or [])
        key = json.dumps([subject, pid, value, qualifiers], ensure_ascii=False)
        n = 0
        while f"{key}#{n}" in self.statement_keys:
            n += 1
        self.statement_keys.add(f"{key}#{n}")
        sid = f"{subject}${str(uuid.uuid5(STATEMENT_NS, f'{key}#{n}')).upper()}"
        stmt = {"mainsnak": self.snak(pid, value, with_hash=False), "type": "statement"}
        if qualifiers:
            quals: dict[str, list] = {}
            for qpid, qval in qualifiers:
                quals.setdefault(qpid, []).append(self.snak(qpid, qval, with_hash=True))
            stmt["qualifiers"] = quals
            stmt["qualifiers-order"] = list(quals)
        stmt["id"] = sid
        stmt["rank"] = rank
        if reference:
            snaks: dict[str, list] = {}
            for rpid, rval in reference:
                snaks.setdefault(rpid, []).append(self.snak(rpid, rval, with_hash=False))
            digest = hashlib.sha1(json.dumps(snaks, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
            stmt["references"] = [{"hash": digest, "snaks": snaks, "snaks-order": list(snaks)}]
        self.items[subject]["claims"].setdefault(pid, []).append(stmt)

    # ---- output ----------------------------------------------------------
    def finish_item(self, ent: dict) -> dict:
        qid = ent["id"]
        labels = {lang: v["value"] for lang, v in ent["labels"].items()}
        sitelinks = {}
        for site in SITES[: self.fame[qid]]:
            lang = site[: -len("wiki")]
            title = labels.get(lang, labels["en"])
            sitelinks[site] = {"site": site, "title": title, "badges": []}
        num = int(qid[1:])
        out = dict(ent)
        out["sitelinks"] = sitelinks
        out["lastrevid"] = 2_000_000_000 + int(hashlib.sha1(qid.encode()).hexdigest()[:6], 16)
        out["modified"] = MODIFIED
        out["pageid"] = num + 100
        out["ns"] = 0
        out["title"] = qid
        return out

    @staticmethod
    def property_entity(pid: str) -> dict:
        datatype, label, description, aliases = PROPERTIES[pid]
        ent = {"type": "property", "datatype": datatype, "id": pid,
               "labels": {"en": {"language": "en", "value": label}},
               "descriptions": {"en": {"language": "en", "value": description}},
               "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
               "claims": {},
               "lastrevid": 2_000_000_000 + int(hashlib.sha1(pid.encode()).hexdigest()[:6], 16),
               "modified": MODIFIED}
        return ent

    def entities(self) -> list[dict]:
        items = [self.finish_item(self.items[q]) for q in sorted(self.items, key=lambda q: int(q[1:]))]
        props = [self.property_entity(p) for p in sorted(PROPERTIES, key=lambda p: int(p[1:]))]
        return items + props


def build() -> list[dict]:
    b = Builder()
    country_label = {c[0]: c[1] for c in COUNTRIES}

    # vocabularies --------------------------------------------------------
    for qid, label, desc, aliases, fame, claims in CLASSES:
        b.item(qid, label, desc, aliases, fame)
    for qid, label, desc, aliases, fame in CONTINENTS:
        b.item(qid, label, desc, aliases, fame)
    for qid, label, desc, aliases, fame in LANGUAGES:
        b.item(qid, label, desc, aliases, fame)
    for qid, label, desc, aliases, fame in CURRENCIES:
        b.item(qid, label, desc, aliases, fame)
    for qid, label, desc, aliases, fame, kind, parent in OCCUPATIONS:
        b.item(qid, label, desc, aliases, fame)
    for qid, label, desc, aliases, fame, parents, juris in POSITIONS:
        b.item(qid, label, desc, aliases, fame)
    for row in COUNTRIES:
        b.item(row[0], row[1], row[2], row[3], row[8])
    for qid, label, desc, aliases, country, fame, *_ in CITIES:
        if qid != "Q334":
            b.item(qid, label, desc or f"capital city of {country_label[country]}", aliases, fame)
    for row in PEOPLE:
        b.item(row[0], row[1], row[2], row[3], row[4])
    for row in WORKS:
        b.item(row[0], row[1], row[2], row[3], row[4])

    for qid, label, desc, aliases, fame, claims in CLASSES:
        for pid, values in claims.items():
            for v in values:
                b.claim(qid, pid, v)
    for qid, *_ in CONTINENTS:
        b.claim(qid, "P31", "Q5107")
    for qid, *_ in LANGUAGES:
        b.claim(qid, "P31", "Q34770")
    for qid, *_ in CURRENCIES:
        b.claim(qid, "P31", "Q8142")
    for qid, label, desc, aliases, fame, kind, parent in OCCUPATIONS:
        b.claim(qid, "P31", kind)
        if parent:
            b.claim(qid, "P279", parent)
    for qid, label, desc, aliases, fame, parents, juris in POSITIONS:
        for p in parents:
            b.claim(qid, "P279", p)
        b.claim(qid, "P1001", juris)

    # countries -----------------------------------------------------------
    for qid, label, desc, aliases, iso, continents, langs, currencies, fame, calling in COUNTRIES:
        b.claim(qid, "P31", "Q6256")
        b.claim(qid, "P31", "Q3624078")
        if qid == "Q334":
            b.claim(qid, "P31", "Q515")
        for c in continents:
            b.claim(qid, "P30", c)
        for city, start, end, rank in CAPITALS.get(qid, []):
            ref = REF_DE if (qid, city) == ("Q183", "Q64") else None
            b.claim(qid, "P36", city, rank, {"P580": start, "P582": end}, reference=ref)
        for lang in langs:
            b.claim(qid, "P37", lang)
        for cur in currencies:
            quals = {"P580": "1999-01-01"} if (qid, cur) == ("Q183", "Q4916") else None
            b.claim(qid, "P38", cur, qualifiers=quals)
        for pop_list in [POPULATION.get(qid, [])]:
            for i, (amount, year) in enumerate(pop_list):
                rank = "preferred" if len(pop_list) > 1 and i == len(pop_list) - 1 else "normal"
                ref = REF_EN if (qid, year) == ("Q30", "2020") else None
                b.claim(qid, "P1082", amount, rank, {"P585": year}, reference=ref)
        if qid in COUNTRY_COORDS:
            lat, lon = COUNTRY_COORDS[qid]
            b.claim(qid, "P625", (lat, lon, 1))
        for text, lang in OFFICIAL_NAMES.get(qid, []):
            b.claim(qid, "P1448", (text, lang))
        b.claim(qid, "P297", iso)
        if calling:
            b.claim(qid, "P474", calling)
    for prop, table in (("P35", HEADS_OF_STATE), ("P6", HEADS_OF_GOVERNMENT)):
        for country, rows in table.items():
            multiple = len(rows) > 1
            for person, start, end in rows:
                rank = "preferred" if multiple and end is None else "normal"
                b.claim(country, prop, person, rank, {"P580": start, "P582": end})
    neighbours: dict[str, list[str]] = {}
    for a, c in BORDERS:
        neighbours.setdefault(a, []).append(c)
        neighbours.setdefault(c, []).append(a)
    for country in [row[0] for row in COUNTRIES]:
        for other in neighbours.get(country, []):
            b.claim(country, "P47", other)

    # cities --------------------------------------------------------------
    capital_of: dict[str, list] = {}
    for country, rows in CAPITALS.items():
        for city, start, end, rank in rows:
            if rank != "deprecated":
                capital_of.setdefault(city, []).append((country, start, end))
    for qid, label, desc, aliases, country, fame, coords, geonames, located_in in CITIES:
        if qid != "Q334":
            b.claim(qid, "P31", "Q515")
            if any(end is None for _, _, end in capital_of.get(qid, [])):
                b.claim(qid, "P31", "Q5119")
            b.claim(qid, "P17", country)
        for cap_country, start, end in capital_of.get(qid, []):
            b.claim(qid, "P1376", cap_country, qualifiers={"P580": start, "P582": end})
        if located_in:
            b.claim(qid, "P131", located_in)
        if coords:
            b.claim(qid, "P625", (coords[0], coords[1], 0.0001))
        if geonames:
            b.claim(qid, "P1566", geonames)
    b.claim("Q334", "P1376", "Q334")

    # people --------------------------------------------------------------
    positions: dict[str, list] = {}
    for (prop, country), office in OFFICE_OF.items():
        table = HEADS_OF_STATE if prop == "P35" else HEADS_OF_GOVERNMENT
        rows = table[country]
        for i, (person, start, end) in enumerate(rows):
            quals = [("P580", start)]
            if end:
                quals.append(("P582", end))
            if office == "Q4970706" and person == "Q567":
                quals += [("P1365", rows[i - 1][0]), ("P1366", rows[i + 1][0])]
            positions.setdefault(person, []).append((office, quals))
    for (qid, label, desc, aliases, fame, sex, birth, death, birthplace, deathplace, citizenships,
         occupations, extra) in PEOPLE:
        b.claim(qid, "P31", "Q5")
        b.claim(qid, "P21", sex)
        if birth:
            ref = REF_EN if qid == "Q937" else None
            b.claim(qid, "P569", birth, reference=ref)
        if qid in DEPRECATED_BIRTHS:
            b.claim(qid, "P569", DEPRECATED_BIRTHS[qid], "deprecated")
        if death:
            b.claim(qid, "P570", death)
        if birthplace:
            b.claim(qid, "P19", birthplace)
        if deathplace:
            b.claim(qid, "P20", deathplace)
        for country, since in citizenships:
            b.claim(qid, "P27", country, qualifiers={"P580": since})
        for occ in occupations:
            b.claim(qid, "P106", occ)
        for office, quals in positions.get(qid, []):
            ref = REF_DE if office == "Q4970706" and qid == "Q567" else None
            b.claim(qid, "P39", office, qualifiers=quals, reference=ref)
        for pid in ("P22", "P26", "P166", "P1412", "P103", "P214", "P227"):
            for entry in extra.get(pid, []):
                if isinstance(entry, tuple):
                    b.claim(qid, pid, entry[0], qualifiers=entry[1])
                else:
                    b.claim(qid, pid, entry)

    # works ---------------------------------------------------------------
    for (qid, label, desc, aliases, fame, cls, creator_prop, creator, date_prop, date, lang_prop, langs,
         origins) in WORKS:
        b.claim(qid, "P31", cls)
        b.claim(qid, creator_prop, creator)
        if date_prop and date:
            b.claim(qid, date_prop, date)
        for lang in langs:
            b.claim(qid, lang_prop, lang)
        for country in origins:
            b.claim(qid, "P495", country)

    return b.entities()


def render(entities: list[dict]) -> str:
    lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in entities]
    return "[\n" + ",\n".join(lines) + "\n]\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DEFAULT, help="output path (default: %(default)s)")
    args = parser.parse_args(argv)
    text = render(build())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    print(f"wrote {args.out} ({text.count(chr(10)) - 2} entities)")


if __name__ == "__main__":
    main()
