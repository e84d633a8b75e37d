"""Unit tests for d2lite.pooling: the kernels and Nadaraya-Watson attention pooling."""

import pytest
import torch

import d2lite as d2l


def test_kernel_values():
    u = torch.tensor([-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5])
    torch.testing.assert_close(d2l.gaussian_kernel(u), torch.exp(-(u**2) / 2))
    torch.testing.assert_close(d2l.boxcar_kernel(u), torch.tensor([0.0, 1, 1, 1, 1, 1, 0]))
    torch.testing.assert_close(d2l.constant_kernel(u), torch.ones(7))
    torch.testing.assert_close(d2l.triangular_kernel(u), torch.tensor([0.0, 0, 0.5, 1, 0.5, 0, 0]))
    torch.testing.assert_close(
        d2l.epanechnikov_kernel(u), torch.tensor([0.0, 0, 0.5625, 0.75, 0.5625, 0, 0])
    )


def test_kernels_that_are_densities_integrate_to_one():
    u = torch.linspace(-3, 3, 6001, dtype=torch.float64)
    du = (u[1] - u[0]).item()
    for kernel in (d2l.triangular_kernel, d2l.epanechnikov_kernel):
        assert abs(kernel(u).sum().item() * du - 1) < 1e-4


def test_nadaraya_watson_shapes_and_weights():
    torch.manual_seed(0)
    x_train, y_train, x_query = torch.rand(20) * 5, torch.randn(20), torch.linspace(0, 5, 7)
    y_hat, weights = d2l.nadaraya_watson(x_train, y_train, x_query, d2l.gaussian_kernel, 0.5)
    assert y_hat.shape == (7,) and weights.shape == (7, 20)
    torch.testing.assert_close(weights.sum(dim=1), torch.ones(7))
    # the predictions against the formula, sum_i K(u_i) y_i / sum_j K(u_j), in float64
    k = torch.exp(-(((x_query.double()[:, None] - x_train.double()[None, :]) / 0.5) ** 2) / 2)
    expected = k @ y_train.double() / k.sum(dim=1)
    torch.testing.assert_close(y_hat.double(), expected, rtol=1e-5, atol=1e-5)
    # The weights themselves (computed by a softmax, to avoid underflow) against the formula's
    # K(u_i) / sum_j K(u_j): a softmax of the wrong scores (no 1/2, no sigma) breaks this.
    by_formula = k / k.sum(dim=1, keepdim=True)
    torch.testing.assert_close(weights.double(), by_formula, rtol=1e-5, atol=1e-6)
    # Vector values: (m, v) -> (n, v), the same weights.
    y2, w2 = d2l.nadaraya_watson(x_train, torch.stack([y_train, 2 * y_train], 1), x_query)
    assert y2.shape == (7, 2)
    torch.testing.assert_close(y2[:, 1], 2 * y2[:, 0])


def test_constant_kernel_is_average_pooling():
    x_train, y_train = torch.arange(5.0), torch.tensor([1.0, 2, 3, 4, 10])
    y_hat, _ = d2l.nadaraya_watson(
        x_train, y_train, torch.tensor([-3.0, 2.0, 9.0]), d2l.constant_kernel
    )
    torch.testing.assert_close(y_hat, torch.full((3,), 4.0))


def test_narrow_gaussian_interpolates_training_points():
    x_train, y_train = torch.arange(5.0), torch.tensor([1.0, -2, 3, 0, 5])
    y_hat, _ = d2l.nadaraya_watson(x_train, y_train, x_train, d2l.gaussian_kernel, 0.05)
    torch.testing.assert_close(y_hat, y_train)


def test_bad_inputs():
    x = torch.arange(4.0)
    with pytest.raises(ValueError, match=r"y_train must have shape \(4,\).*got \(3,\)"):
        d2l.nadaraya_watson(x, torch.zeros(3), x)
    with pytest.raises(ValueError, match=r"1-D, got \(4, 1\)"):
        d2l.nadaraya_watson(x[:, None], torch.zeros(4), x)
    with pytest.raises(ValueError, match="sigma must be positive"):
        d2l.nadaraya_watson(x, torch.zeros(4), x, sigma=0.0)
    with pytest.raises(ValueError, match=r"no training input .* queries \[1.5\]"):
        d2l.nadaraya_watson(x, torch.zeros(4), torch.tensor([1.5]), d2l.boxcar_kernel, 0.2)


def test_narrow_gaussian_is_nearest_neighbor_not_an_error():
    # float32 exp(-u^2/2) underflows to 0 for every key once u^2/2 > ~104; the Gaussian weights
    # are a softmax of -u^2/2, so the nearest key still gets (almost) all the weight
    x_train, y_train = torch.tensor([0.1, 0.35, 0.62]), torch.tensor([1.0, 2.0, 3.0])
    x_query = torch.tensor([0.0, 0.3, 0.5])
    assert (d2l.gaussian_kernel((x_query[:, None] - x_train) / 0.0037) == 0).all(dim=1).any()
    y_hat, weights = d2l.nadaraya_watson(x_train, y_train, x_query, d2l.gaussian_kernel, 0.0037)
    assert torch.isfinite(weights).all()
    torch.testing.assert_close(weights.sum(dim=1), torch.ones(3))
    torch.testing.assert_close(y_hat, torch.tensor([1.0, 2.0, 3.0]))
    # a learned width is a tensor; the gradient flows through the softmax
    sigma = torch.tensor(0.5, requires_grad=True)
    y_hat, _ = d2l.nadaraya_watson(x_train, y_train, x_query, d2l.gaussian_kernel, sigma)
    y_hat.sum().backward()
    assert sigma.grad is not None and torch.isfinite(sigma.grad)
