package app

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/gatehouse/gatehouse/backend/store"
)

// AttentionSettings say how Gatehouse may get the person's attention when
// an agent's request waits for them.
type AttentionSettings struct {
	// Notifications allows desktop notifications (the freedesktop
	// notification service in the desktop window, the browser's
	// Notification API in browser mode). The window's urgency hint and
	// the tab title's "(N) Approval needed" do not depend on it.
	Notifications bool `json:"notifications"`
}

const (
	attentionNamespace = "ui"
	attentionKey       = "attention"
)

// GetAttention returns the attention settings (notifications are on until
// turned off).
func (f *Facade) GetAttention(Empty) (AttentionSettings, error) {
	return f.attentionSettings(f.ctx)
}

// SetAttention stores the attention settings whole.
func (f *Facade) SetAttention(a AttentionSettings) (AttentionSettings, error) {
	b, _ := json.Marshal(a)
	if err := f.env.DB.Put(f.ctx, attentionNamespace, attentionKey, b); err != nil {
		return AttentionSettings{}, fail("settings", CategoryIO, err)
	}
	f.events.publish("settings", map[string]string{"what": "attention"})
	return a, nil
}

func (f *Facade) attentionSettings(ctx context.Context) (AttentionSettings, error) {
	b, err := f.env.DB.Get(ctx, attentionNamespace, attentionKey)
	if errors.Is(err, store.ErrNotFound) {
		return AttentionSettings{Notifications: true}, nil
	}
	if err != nil {
		return AttentionSettings{}, fail("settings", CategoryIO, err)
	}
	var a AttentionSettings
	if err := json.Unmarshal(b, &a); err != nil {
		return AttentionSettings{}, fail("settings", CategoryInternal, err)
	}
	return a, nil
}

// notificationsOn reports whether desktop notifications are allowed; a
// settings error counts as allowed, since a missed request costs the
// agent its work while an extra notification costs a glance.
func (f *Facade) notificationsOn(ctx context.Context) bool {
	a, err := f.attentionSettings(ctx)
	return err != nil || a.Notifications
}
