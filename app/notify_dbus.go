package app

import (
	"context"
	"fmt"
	"sync"

	"github.com/godbus/dbus/v5"
)

// The freedesktop notification service
// (https://specifications.freedesktop.org/notification-spec/).
const (
	notifyName   = "org.freedesktop.Notifications"
	notifyPath   = dbus.ObjectPath("/org/freedesktop/Notifications")
	notifyIface  = "org.freedesktop.Notifications"
	notifyAction = "default" // the action a click on the notification invokes
)

// dbusNotifier sends notifications over the D-Bus session bus and reports
// the ones the person clicked. It uses its own private connection, since
// Wails' single-instance lock holds the shared one.
type dbusNotifier struct {
	conn    *dbus.Conn
	obj     dbus.BusObject
	clicked chan uint32
	done    chan struct{}
	once    sync.Once
}

// newDBusNotifier connects to the session bus ($DBUS_SESSION_BUS_ADDRESS).
// It fails when there is no session bus; a missing notification service is
// only found out at the first Notify.
func newDBusNotifier() (*dbusNotifier, error) {
	conn, err := dbus.SessionBusPrivate()
	if err != nil {
		return nil, fmt.Errorf("session bus: %w", err)
	}
	if err := conn.Auth(nil); err != nil {
		conn.Close()
		return nil, fmt.Errorf("session bus: %w", err)
	}
	if err := conn.Hello(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("session bus: %w", err)
	}
	if err := conn.AddMatchSignal(dbus.WithMatchObjectPath(notifyPath), dbus.WithMatchInterface(notifyIface), dbus.WithMatchMember("ActionInvoked")); err != nil {
		conn.Close()
		return nil, fmt.Errorf("session bus: %w", err)
	}
	n := &dbusNotifier{conn: conn, obj: conn.Object(notifyName, notifyPath), clicked: make(chan uint32, 16), done: make(chan struct{})}
	signals := make(chan *dbus.Signal, 16)
	conn.Signal(signals)
	go func() {
		for s := range signals {
			if s.Name != notifyIface+".ActionInvoked" || len(s.Body) != 2 {
				continue
			}
			id, ok1 := s.Body[0].(uint32)
			action, ok2 := s.Body[1].(string)
			if !ok1 || !ok2 || action != notifyAction {
				continue
			}
			select {
			case n.clicked <- id:
			case <-n.done:
				return
			default: // the person clicked faster than the window can follow
			}
		}
	}()
	return n, nil
}

// Notify implements notifier. The text of n must already be safe
// (requestNotice makes it so).
func (n *dbusNotifier) Notify(ctx context.Context, no notice) (uint32, error) {
	hints := map[string]dbus.Variant{
		"desktop-entry": dbus.MakeVariant("gatehouse"),
		"urgency":       dbus.MakeVariant(byte(1)), // normal
		"category":      dbus.MakeVariant("im.received"),
	}
	var id uint32
	// expire_timeout 0: the notification stays until the request is
	// decided or expires (Withdraw), or the person dismisses it.
	err := n.obj.CallWithContext(ctx, notifyIface+".Notify", 0,
		"Gatehouse", uint32(0), "gatehouse", no.Summary, no.Body,
		[]string{notifyAction, "Show request"}, hints, int32(0)).Store(&id)
	if err != nil {
		return 0, fmt.Errorf("%s.Notify: %w", notifyIface, err)
	}
	return id, nil
}

// Withdraw implements notifier; a notification already gone is not an
// error worth reporting.
func (n *dbusNotifier) Withdraw(ctx context.Context, id uint32) {
	n.obj.CallWithContext(ctx, notifyIface+".CloseNotification", 0, id)
}

// Clicked implements notifier.
func (n *dbusNotifier) Clicked() <-chan uint32 { return n.clicked }

// Close ends the connection.
func (n *dbusNotifier) Close() {
	n.once.Do(func() {
		close(n.done)
		n.conn.Close()
	})
}
