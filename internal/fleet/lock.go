package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultLockPing is how often a server pings the connection of a
// session advisory lock it holds (a watch file's scheduler lock, a watch
// cycle's liveness lock): the lock is the connection's, so a connection
// that dropped lost it, and the server learns so within one ping (plus
// the ping's own timeout, LockPingTimeouts pings).
const DefaultLockPing = time.Second

// LockPingTimeouts is how many ping periods one ping may take before the
// lock is taken for lost (a connection that hangs is as good as gone).
const LockPingTimeouts = 3

// ErrLockLost is the cause of a held lock's context when the lock was
// lost.
var ErrLockLost = errors.New("the advisory lock's connection dropped: the lock is lost")

// heldLock is a session advisory lock held on a connection of its own,
// pinged every period while held. Its context ends when the lock is lost
// (cause ErrLockLost) or released.
type heldLock struct {
	conn   *pgxpool.Conn
	key1   int32
	key2   int32
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}
	once   sync.Once
}

// tryLock takes the advisory lock (key1, key2) when free, on a
// connection of its own, and pings it every period (DefaultLockPing when
// zero) until released. ok is false when another session holds it.
func tryLock(ctx context.Context, pool *pgxpool.Pool, key1, key2 int32, period time.Duration) (l *heldLock, ok bool, err error) {
	if period <= 0 {
		period = DefaultLockPing
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, false, err
	}
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, $2)`, key1, key2).Scan(&ok); err != nil || !ok {
		conn.Release()
		return nil, false, err
	}
	l = &heldLock{conn: conn, key1: key1, key2: key2, done: make(chan struct{})}
	l.ctx, l.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	go l.ping(period)
	return l, true, nil
}

// ping pings the lock's connection every period until released or lost.
func (l *heldLock) ping(period time.Duration) {
	defer close(l.done)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(l.ctx, LockPingTimeouts*period)
		err := l.conn.Ping(pctx)
		cancel()
		if err != nil && l.ctx.Err() == nil {
			l.cancel(fmt.Errorf("%w (%v)", ErrLockLost, err))
			return
		}
	}
}

// Context ends when the lock is lost or released.
func (l *heldLock) Context() context.Context { return l.ctx }

// Lost says whether the lock was lost, and why.
func (l *heldLock) Lost() error {
	if err := context.Cause(l.ctx); errors.Is(err, ErrLockLost) {
		return err
	}
	return nil
}

// PID is the PostgreSQL backend holding the lock (for the tests, which
// drop its connection with pg_terminate_backend).
func (l *heldLock) PID() uint32 { return l.conn.Conn().PgConn().PID() }

// Release stops the pings, unlocks (when the lock is still held) and
// gives the connection back.
func (l *heldLock) Release() {
	l.once.Do(func() {
		lost := l.Lost()
		l.cancel(nil)
		<-l.done
		if lost == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, _ = l.conn.Exec(ctx, `SELECT pg_advisory_unlock($1, $2)`, l.key1, l.key2)
			cancel()
		}
		l.conn.Release()
	})
}
