"""How agents and frameworks reach contextfs: LangChain tools and retriever."""
