package permission

import "strings"

// find judges find: its -exec/-execdir/-ok/-okdir commands become child
// parts; -delete, -fprint*, -fls and -ok* make it not read-only; -delete
// or -exec rm -r from a catastrophic starting point is catastrophic.
func (c *classifier) find(f frame, sc *scope, args []word, cc cmdCtx) (bool, string) {
	i := 0
	// Leading options (-H, -L, -P, -D debugopts, -Olevel).
	for i < len(args) && args[i].exact {
		a := args[i].s
		if a == "-H" || a == "-L" || a == "-P" || strings.HasPrefix(a, "-O") {
			i++
		} else if a == "-D" {
			i += 2
		} else {
			break
		}
	}
	var starts []word
	for i < len(args) && (!args[i].exact || !isFindExpr(args[i].s)) {
		starts = append(starts, args[i])
		i++
	}
	if len(starts) == 0 {
		starts = []word{lit(".")}
	}
	ro, reason := true, "read-only command"
	if ok, why := strict(args); !ok {
		ro, reason = false, why
	}
	deletes, tests := false, 0
	for ; i < len(args); i++ {
		a := args[i].s
		switch a {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].s != ";" && !(args[j].s == "+" && j > i+1 && args[j-1].s == "{}") {
				j++
			}
			inner := args[i+1 : min(j, len(args))]
			if len(inner) > 0 {
				if n, _ := progName(inner[0].s); n == "rm" && rmRecursive(inner[1:]) {
					deletes = true
				}
				c.child(f, sc, inner, cmdCtx{})
			}
			if a == "-ok" || a == "-okdir" {
				ro, reason = false, "find "+a+" asks on the terminal"
			}
			i = j
		case "-delete":
			deletes = true
			ro, reason = false, "find -delete deletes files"
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			ro, reason = false, "find "+a+" writes a file"
		case "-depth", "-print", "-print0", "-xdev", "-mount", "-noleaf", "-follow",
			"-ignore_readdir_race", "-noignore_readdir_race", "-daystart", "(", ")", "!", ",", "-o", "-a", "-or", "-and", "-not":
		case "-maxdepth", "-mindepth":
			i++
		default:
			if strings.HasPrefix(a, "-") {
				tests++
			}
		}
	}
	if deletes {
		for _, s := range starts {
			p, ok := c.targetPath(s, sc)
			if ok && (c.systemTarget(p) || within(p, c.workspace) && (p != c.workspace || tests == 0)) {
				c.parts[f.parent].Catastrophic = true
				c.parts[f.parent].Reason = "find deletes everything under " + describePath(s.s, p)
			}
		}
	}
	return ro, reason
}

// isFindExpr reports whether a find argument starts the expression.
func isFindExpr(s string) bool {
	return strings.HasPrefix(s, "-") && s != "-" || s == "(" || s == "!" || s == ","
}

// rmRecursive reports whether rm args include a recursive option.
func rmRecursive(args []word) bool {
	for _, a := range args {
		if a.s == "--" {
			return false
		}
		if a.s == "--recursive" || strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--") && strings.ContainsAny(a.s, "rR") {
			return true
		}
	}
	return false
}
