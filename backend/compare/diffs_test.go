package compare

import (
	"errors"
	"reflect"
	"testing"
)

func TestDiffsListEveryDifferingItem(t *testing.T) {
	lr, rr := baseRecord(), baseRecord()
	lr["frames"] = arr{frame(0, 5, "a"), frame(1, 10, "b"), frame(2, 15, "c"), frame(3, 20, "d")}
	rr["frames"] = arr{frame(0, 5, "a"), frame(1, 10, "B"), frame(2, 15, "c"), frame(3, 20, "D"), frame(4, 25, "e")}
	lr["rendered_frames"], rr["rendered_frames"] = arr{}, arr{}
	lr["process_samples"], rr["process_samples"] = arr{sample(30, 100, "sh")}, arr{sample(30, 100, "bash")}
	l, r := env(t, lr), env(t, rr)
	res := mustCompare(t, l, r, Options{Mode: ModeExact})
	diffs, err := Diffs(l, r, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != len(Dimensions()) {
		t.Fatalf("%d dimensions", len(diffs))
	}
	term := diffs[0]
	if term.Dimension != "terminal" || term.Total != 3 || len(term.Items) != 2 || term.LeftCount != 4 || term.RightCount != 5 {
		t.Fatalf("terminal %+v", term)
	}
	if it := term.Items[0]; it.Index != 1 || *it.LeftAtMS != 10 || *it.LeftLocation != "$.normalized_result.frames[1]" ||
		it.Right.(map[string]any)["data"] != "B" {
		t.Errorf("first item %+v", it)
	}
	// The first divergence Compare reports is one of the listed items.
	fd := res.FirstDivergence
	if fd.Dimension != "terminal" || fd.Index != term.Items[0].Index {
		t.Errorf("first divergence %+v", fd)
	}
	if p := diffs[5]; p.Dimension != "process" || p.Total != 1 || len(p.Items) != 1 {
		t.Errorf("process %+v", p)
	}
	for _, d := range diffs {
		if d.Dimension != "terminal" && d.Dimension != "process" && d.Total != 0 {
			t.Errorf("%s lists %d differences", d.Dimension, d.Total)
		}
	}
	// Compare lists the same differences when asked, from one read.
	withDiffs := mustCompare(t, l, r, Options{Mode: ModeExact, DiffLimit: 2})
	if !reflect.DeepEqual(withDiffs.Diffs, diffs) || res.Diffs != nil {
		t.Errorf("Compare's diffs %+v, want %+v (and none unasked: %+v)", withDiffs.Diffs, diffs, res.Diffs)
	}
	// One side missing an item: its time and location are null.
	all, _ := Diffs(l, r, 100)
	last := all[0].Items[len(all[0].Items)-1]
	if last.Index != 4 || last.Left != nil || last.LeftAtMS != nil || last.LeftLocation != nil || *last.RightAtMS != 25 {
		t.Errorf("one-sided item %+v", last)
	}
}

func TestDiffsRefuseWhatCompareRefuses(t *testing.T) {
	lr, rr := baseRecord(), baseRecord()
	rr["manifest"].(obj)["comparison_contract"].(obj)["timeout_ms"] = 1000
	_, err := Diffs(env(t, lr), env(t, rr), 10)
	var ce *Error
	if !errors.As(err, &ce) || ce.Code != CodeIncompatibleContracts {
		t.Fatalf("different contracts: %v", err)
	}
	if _, err := Diffs(nil, env(t, lr), 10); err == nil {
		t.Fatal("nil envelope accepted")
	}
	bad := baseRecord()
	bad["frames"] = arr{frame(1, 5, "x")}
	if _, err := Diffs(env(t, bad), env(t, lr), 10); !errors.As(err, &ce) || ce.Code != CodeInvalidCapture {
		t.Fatalf("invalid record: %v", err)
	}
}
