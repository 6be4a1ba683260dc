"""A local web page to browse a root and review what agents changed (``contextfs ui``).

Needs the ``ui`` extra (``pip install 'contextfs-git[ui]'``): Starlette and uvicorn serve
it on a loopback address, Jinja2 renders it with autoescaping, markdown-it-py renders
notes with raw HTML turned off. :mod:`.security` holds the token, CSRF and header rules;
:mod:`.render` turns hostile text into inert HTML; :mod:`.pages` gathers what each screen
shows; :mod:`.app` holds the routes; :mod:`.server` binds the loopback socket; :mod:`.cli`
is the command. Importing this package imports none of the extra's libraries.
"""

from __future__ import annotations

__all__: list[str] = []
