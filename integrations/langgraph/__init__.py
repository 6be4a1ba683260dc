"""The LangGraph ``BaseStore`` on a context root (extra ``langgraph``): the store, its
index of items, and the names that map namespaces and keys to files.

Import :class:`~contextfs.integrations.langgraph.store.ContextStore` from ``.store``; this
package imports no LangGraph itself.
"""
