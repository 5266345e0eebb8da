package sim

// requestQueue is the scheduler's waiting queue: FCFS at the back, preempted requests pushed
// back in at the front. Both ends are amortised O(1), which matters when an overloaded engine
// holds thousands of waiting requests and preempts often.
type requestQueue struct {
	buf  []*request
	head int
}

func (q *requestQueue) len() int { return len(q.buf) - q.head }

func (q *requestQueue) at(i int) *request { return q.buf[q.head+i] }

func (q *requestQueue) front() *request { return q.buf[q.head] }

func (q *requestQueue) pushBack(r *request) { q.buf = append(q.buf, r) }

func (q *requestQueue) popFront() *request {
	r := q.buf[q.head]
	q.buf[q.head] = nil
	q.head++
	if q.head == len(q.buf) {
		q.buf, q.head = q.buf[:0], 0
	}
	return r
}

func (q *requestQueue) pushFront(r *request) {
	if q.head == 0 {
		// Re-home the contents with as much room in front as there are elements.
		n := q.len()
		room := max(16, n)
		buf := make([]*request, room+n, room+n+cap(q.buf)-len(q.buf))
		copy(buf[room:], q.buf)
		q.buf, q.head = buf, room
	}
	q.head--
	q.buf[q.head] = r
}
