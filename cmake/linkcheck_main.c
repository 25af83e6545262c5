/*
 * The main() of the layer link checks (CMakeLists.txt perfdb_layer_lib):
 * the program is never run; linking it proves that every object of one
 * layer finds each symbol it calls in that layer or the layers below.
 */
int main(void)
{
	return 0;
}
