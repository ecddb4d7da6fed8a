"""KeysFooter: the footer shows the focused widget's keys, updated only when they change and
then in place (Textual's Footer recomposed on every bindings signal, several per key press,
mounting every key again)."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Input
from textual.widgets._footer import FooterKey

from roofscope.tui.widgets.footer import KeysFooter, _relabel


class _Box(Input):
    def __init__(self, keys: dict[str, str], **kwargs):
        super().__init__(**kwargs)
        for key, label in keys.items():
            self._bindings.bind(key, f"app.ring_{key}", label)  # one action a key, as shown


class _Two(App[None]):
    BINDINGS = [Binding("f10", "bell", "Ring")]

    def compose(self) -> ComposeResult:
        yield _Box({"f1": "First"}, id="one")
        yield _Box({"f2": "Second"}, id="two")
        yield _Box({"f3": "Third", "f4": "Fourth", "f5": "Fifth"}, id="three")
        yield KeysFooter()


def _shown(app: App) -> list[str]:
    """The keys on screen, in order (the footer keeps keys it hid for the next change)."""
    return [key.description for key in app.query(FooterKey) if key.display]


@pytest.mark.slow
async def test_footer_follows_the_focus_and_updates_only_on_a_change():
    app = _Two()
    async with app.run_test(size=(80, 10)) as pilot:
        footer = app.query_one(KeysFooter)
        updates = recomposes = 0
        real_apply, real_recompose = footer._apply, footer.recompose

        def counted_apply(plan) -> None:
            nonlocal updates
            updates += 1
            real_apply(plan)

        async def counted_recompose() -> None:
            nonlocal recomposes
            recomposes += 1
            await real_recompose()

        footer._apply = counted_apply  # type: ignore[method-assign]
        footer.recompose = counted_recompose  # type: ignore[method-assign]
        app.query_one("#one").focus()
        await pilot.pause()
        assert _shown(app)[:2] == ["First", "Ring"]
        updates = recomposes = 0  # the first keys were composed from an empty footer
        mounted = set(app.query(FooterKey))
        app.query_one("#two").focus()
        await pilot.pause()
        assert _shown(app)[:2] == ["Second", "Ring"] and "First" not in _shown(app)
        assert updates == 1  # one change of keys, one update (in place, as the focus moved)
        for _ in range(3):  # the same keys signalled again: nothing to redo
            app.refresh_bindings()
            await pilot.pause()
        assert updates == 1
        assert _shown(app)[:2] == ["Second", "Ring"]
        # more keys, then fewer again: the widgets there are relabelled, hidden, shown again
        app.query_one("#three").focus()
        await pilot.pause()
        assert _shown(app)[:4] == ["Third", "Fourth", "Fifth", "Ring"]
        after_three = set(app.query(FooterKey))
        app.query_one("#one").focus()
        await pilot.pause()
        assert _shown(app)[:2] == ["First", "Ring"]
        assert not {"Third", "Fourth", "Fifth"} & set(_shown(app))
        app.query_one("#three").focus()
        await pilot.pause()
        assert _shown(app)[:4] == ["Third", "Fourth", "Fifth", "Ring"]
        assert set(app.query(FooterKey)) == after_three  # nothing mounted the second time
        assert len(after_three - mounted) == 2  # the two keys #three has more than #two
        assert recomposes == 0  # no footer composed from scratch after the first keys


def test_a_key_relabelled_before_it_is_mounted_is_measured_again():
    """A key mounted by one update and relabelled by the next before its mount completed (under
    load) kept the old text's width: Textual's refresh() clears a widget's cached content width
    only once it is mounted, and caches it per container width, so "Zoom out" was drawn as
    "Zoom ou". The relabelling clears it itself."""
    key = FooterKey("f1", "F1", "Zoom", "app.zoom")
    key._content_width_cache = (80, 8)  # measured with the old text, in an 80-wide footer
    assert not key.is_mounted
    _relabel(key, FooterKey("f1", "F1", "Zoom out", "app.zoom"))
    assert key.description == "Zoom out"
    assert key._content_width_cache == (None, 0)  # measured again, with the new text


def test_a_key_relabelled_while_a_layout_is_pending_gets_a_new_box_model():
    """Relabelled twice between two layouts (two footer updates in one busy frame), a key kept
    its box model, cached under a count refresh(layout=True) bumps only when no layout is
    pending: "Reverse" was drawn as "Reve". Each relabelling counts."""
    key = FooterKey("r", "r", "Rev", "app.reverse")
    key._layout_required = True  # the first relabelling's layout has not run yet
    before = key._layout_updates
    _relabel(key, FooterKey("r", "r", "Reverse", "app.reverse"))
    assert key._layout_updates == before + 1  # the box model's cache key moved
