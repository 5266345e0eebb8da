package sim

import "testing"

// TestRequestQueue mixes both ends the way the scheduler does and checks the order.
func TestRequestQueue(t *testing.T) {
	var q requestQueue
	r := func(id int64) *request { return &request{id: id} }
	ops := []struct {
		op string // b: pushBack, f: pushFront, p: popFront
		id int64
	}{{"b", 1}, {"b", 2}, {"f", 3}, {"p", 3}, {"f", 4}, {"f", 5}, {"b", 6}, {"p", 5}, {"p", 4}, {"p", 1},
		{"p", 2}, {"p", 6}, {"f", 7}, {"b", 8}, {"p", 7}}
	for i, o := range ops {
		switch o.op {
		case "b":
			q.pushBack(r(o.id))
		case "f":
			q.pushFront(r(o.id))
		case "p":
			if got := q.popFront().id; got != o.id {
				t.Fatalf("op %d: popped %d, want %d", i, got, o.id)
			}
		}
	}
	if q.len() != 1 || q.at(0).id != 8 {
		t.Fatalf("left %d requests, front %v", q.len(), q.at(0))
	}
	for i := 0; i < 100; i++ {
		q.pushFront(r(int64(100 + i)))
	}
	if q.len() != 101 || q.front().id != 199 || q.at(100).id != 8 {
		t.Fatalf("after 100 pushFront: len %d front %d back %d", q.len(), q.front().id, q.at(100).id)
	}
}
