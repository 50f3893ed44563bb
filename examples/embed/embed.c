/* Embedding ferro from C: create a runtime, make tensors, call ops, read results, handle
 * errors. With a plugin path as argument it also loads that plugin and calls its op
 * example.softplus (examples/plugin).
 *
 * Exit status 0 when every result matches its expected value. */
#include <ferro/ferro.h>

#include <math.h>
#include <stdio.h>

/* Prints and frees a failed status; returns 1 if there was one. */
static int failed(ferro_status st, const char* what) {
    if (st == NULL) return 0;
    fprintf(stderr, "%s: %s: %s\n", what, ferro_status_code_name(ferro_status_code(st)), ferro_status_message(st));
    ferro_status_free(st);
    return 1;
}

static int softplus_check(ferro_runtime* rt, const char* plugin_path) {
    const double x[4] = {-30.0, -1.0, 0.0, 40.0};
    const int64_t shape[1] = {4};
    double y[4];
    ferro_tensor in = NULL, out = NULL;
    uint32_t n_out = 0;
    int i, bad = 0;
    if (failed(ferro_runtime_load_plugin(rt, plugin_path), "load plugin")) return 1;
    if (failed(ferro_tensor_from_host(rt, "cpu", FERRO_DTYPE_F64, 1, shape, x, &in), "tensor")) return 1;
    if (failed(ferro_call(rt, "example.softplus", NULL, 0, &in, 1, &out, 1, &n_out), "example.softplus")) {
        ferro_tensor_release(in);
        return 1;
    }
    bad |= failed(ferro_tensor_copy_to_host(out, y, sizeof y), "copy out");
    for (i = 0; i < 4 && !bad; ++i) {
        const double want = x[i] > 0 ? x[i] + log1p(exp(-x[i])) : log1p(exp(x[i]));
        printf("softplus(%g) = %.17g (want %.17g)\n", x[i], y[i], want);
        if (fabs(y[i] - want) > 1e-15 * (1 + fabs(want))) bad = 1;
    }
    ferro_tensor_release(in);
    ferro_tensor_release(out);
    return bad;
}

int main(int argc, char** argv) {
    ferro_runtime_options options;
    ferro_runtime* rt = NULL;
    const double a_data[6] = {1, 2, 3, 4, 5, 6}; /* 2 x 3 */
    const double b_data[3] = {1, 0, -1};         /* 3 */
    const int64_t a_shape[2] = {2, 3}, b_shape[1] = {3};
    ferro_tensor a = NULL, b = NULL, c = NULL, bad = NULL;
    double c_data[2];
    int status = 1;

    ferro_runtime_options_init(&options);
    options.autoload = 0; /* this app loads what it names */
    if (failed(ferro_runtime_create(&options, &rt), "create runtime")) return 1;
    if (failed(ferro_tensor_from_host(rt, "cpu", FERRO_DTYPE_F64, 2, a_shape, a_data, &a), "tensor a")) goto done;
    if (failed(ferro_tensor_from_host(rt, "cpu", FERRO_DTYPE_F64, 1, b_shape, b_data, &b), "tensor b")) goto done;
    if (failed(ferro_matmul(rt, a, b, &c), "matmul")) goto done;
    if (failed(ferro_tensor_copy_to_host(c, c_data, sizeof c_data), "copy out")) goto done;
    printf("[[1 2 3] [4 5 6]] @ [1 0 -1] = [%g %g]\n", c_data[0], c_data[1]);
    if (c_data[0] != -2.0 || c_data[1] != -2.0) goto done;

    /* A mistake gets a clear error, not a crash. */
    {
        ferro_status st = ferro_add(rt, a, c, &bad);
        printf("a + c -> %s: %s\n", ferro_status_code_name(ferro_status_code(st)), ferro_status_message(st));
        if (ferro_status_code(st) != FERRO_INVALID_ARGUMENT) {
            ferro_status_free(st);
            goto done;
        }
        ferro_status_free(st);
    }
    status = argc > 1 ? softplus_check(rt, argv[1]) : 0;
done:
    ferro_tensor_release(a);
    ferro_tensor_release(b);
    ferro_tensor_release(c);
    ferro_runtime_destroy(rt);
    printf("%s\n", status == 0 ? "ok" : "FAILED");
    return status;
}
