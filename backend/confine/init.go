package confine

// init handles the launcher as early as the program allows: packages are
// initialized in import-path order once their imports are, so this runs
// before heavier packages of the program (a JSON Schema library compiles
// its meta-schemas at init, about 14 ms here) that the launcher has no use
// for. Calling MaybeLaunch again from main is harmless.
func init() { MaybeLaunch() }
