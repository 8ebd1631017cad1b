"""Other tools' files, read and written: probe sets made elsewhere (LAMA T-REx, Google-RE, ParaRel,
SQuAD and ConceptNet, PopQA, EntityQuestions, mLAMA, X-FACTR, KILT T-REx, DistFact's sets and fact
lists; importers.py names them all, import_rows.py is the row reading they share),
lm-evaluation-harness tasks (import_lm_eval.py with its YAML, template and size readers) and the
task folders factprobe exports for the harness (export_lm_eval.py). Everything here reads a file
from a stranger: a row that does not fit costs only itself, named by file and line.
"""
