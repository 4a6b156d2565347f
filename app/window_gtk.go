//go:build desktop && linux

package app

/*
#cgo pkg-config: gtk+-3.0
#include <gtk/gtk.h>

// Wails v2 has no call for the window's focus or its urgency hint, so
// these few lines of GTK do it. Everything touching GTK runs on the GTK
// main loop (g_idle_add); only gh_active is read from Go, atomically.

static gint gh_active = 0;
static gint gh_hooked = 0;

static void gh_on_active(GObject *o, GParamSpec *p, gpointer d) {
	gboolean a = gtk_window_is_active(GTK_WINDOW(o));
	g_atomic_int_set(&gh_active, a);
	if (a) gtk_window_set_urgency_hint(GTK_WINDOW(o), FALSE); // the person is here now
}

static gboolean gh_each(gpointer what) {
	GList *l = gtk_window_list_toplevels();
	for (GList *i = l; i; i = i->next) {
		GtkWindow *w = GTK_WINDOW(i->data);
		if (gtk_window_get_window_type(w) != GTK_WINDOW_TOPLEVEL || !gtk_widget_get_visible(GTK_WIDGET(w))) continue;
		switch (GPOINTER_TO_INT(what)) {
		case 0: // hook focus tracking, once
			if (!g_atomic_int_get(&gh_hooked)) {
				g_signal_connect(w, "notify::is-active", G_CALLBACK(gh_on_active), NULL);
				if (gtk_window_is_active(w)) g_atomic_int_set(&gh_active, 1);
			}
			break;
		case 1: // ask for attention
			gtk_window_deiconify(w);
			if (!gtk_window_is_active(w)) gtk_window_set_urgency_hint(w, TRUE);
			break;
		case 2: // present
			gtk_window_deiconify(w);
			gtk_window_present_with_time(w, GDK_CURRENT_TIME);
			break;
		}
	}
	if (GPOINTER_TO_INT(what) == 0) g_atomic_int_set(&gh_hooked, 1);
	g_list_free(l);
	return G_SOURCE_REMOVE;
}

static void gh_do(int what) { g_idle_add(gh_each, GINT_TO_POINTER(what)); }
static int gh_is_active(void) { return g_atomic_int_get(&gh_active); }
*/
import "C"

// gtkWindow is the Wails window seen through GTK (attentionWindow).
type gtkWindow struct{}

// hookGTKWindow starts following the window's focus; call it once the
// window exists (Wails' OnDomReady). Until then Focused is false.
func hookGTKWindow() { C.gh_do(0) }

// Focused implements attentionWindow.
func (gtkWindow) Focused() bool { return C.gh_is_active() != 0 }

// RequestAttention implements attentionWindow: un-minimise and set the
// urgency hint (the window manager flashes or marks the window; GTK
// clears it when the window is activated).
func (gtkWindow) RequestAttention() { C.gh_do(1) }

// Present implements attentionWindow.
func (gtkWindow) Present() { C.gh_do(2) }
