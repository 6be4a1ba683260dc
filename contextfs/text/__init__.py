"""Text rules shared by every layer: words, stems and BM25 (``analysis``), token counts,
conversation turns, and the periods a question names.

Internal: nothing here is re-exported.
"""
